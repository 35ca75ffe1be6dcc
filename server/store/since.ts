/**
 * The `since` query value of `/sessions` and `/runs`: a relative age (`7d`, `12h`, `30m`) or an
 * absolute ISO-8601 date (`2026-04-25`, UTC midnight) or date-time (`2026-04-25T12:03:00Z`,
 * `…+02:00`; without an offset it is read as UTC).
 */

const RELATIVE_RE = /^([1-9]\d*)([dhm])$/
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const

/** The instant `value` names, relative to `now`; throws an Error saying what is accepted. */
export function parseSince(value: string, now: Date = new Date()): Date {
  const rel = RELATIVE_RE.exec(value)
  if (rel) return finite(value, now.getTime() - Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS])
  const d = DATE_RE.exec(value)
  if (d) return calendar(value, d.slice(1, 4), '00', '00', '00', '', 'Z')
  const dt = DATE_TIME_RE.exec(value)
  if (dt) return calendar(value, dt.slice(1, 4), dt[4]!, dt[5]!, dt[6] ?? '00', dt[7] ?? '', dt[8] ?? 'Z')
  throw invalid(value)
}

function invalid(value: string): Error {
  const shown = JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  return new Error(
    `invalid since value ${shown}: expected Nd, Nh or Nm (N a positive integer), or an ISO-8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM])`,
  )
}

function finite(value: string, ms: number): Date {
  const t = new Date(ms)
  if (Number.isNaN(t.getTime())) throw invalid(value)
  return t
}

/** Build the instant, refusing fields out of range (`2026-02-30`, `25:00`, `+24:00`). */
function calendar(
  value: string,
  ymd: string[],
  hh: string,
  mi: string,
  ss: string,
  frac: string,
  offset: string,
): Date {
  const [y, mo, d] = ymd.map(Number) as [number, number, number]
  const [h, m, s] = [Number(hh), Number(mi), Number(ss)]
  const probe = new Date(Date.UTC(y, mo - 1, d))
  probe.setUTCFullYear(y)
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) throw invalid(value)
  if (h > 23 || m > 59 || s > 59) throw invalid(value)
  let offsetMin = 0
  if (offset !== 'Z') {
    const oh = Number(offset.slice(1, 3))
    const om = Number(offset.slice(4, 6))
    if (oh > 23 || om > 59) throw invalid(value)
    offsetMin = (offset[0] === '-' ? -1 : 1) * (oh * 60 + om)
  }
  const ms = frac === '' ? 0 : Math.floor(Number(`0${frac}`) * 1000)
  const utc = new Date(Date.UTC(y, mo - 1, d, h, m, s, ms))
  utc.setUTCFullYear(y, mo - 1, d)
  return finite(value, utc.getTime() - offsetMin * 60_000)
}
