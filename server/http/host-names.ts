/**
 * Host names as the DNS-rebinding guard reads them (guard.ts), with nothing else loaded: the
 * start-up path uses them before the HTTP app exists (the bind check, the liveness answer given
 * while the app loads: server/http/start-gate.ts).
 */
import { isIP } from 'node:net'

/**
 * The host name of a Host header value (`name`, `name:port`, `[v6]`, `[v6]:port`), lower-cased,
 * or undefined when the value is not a well-formed host (a comma-joined pair, junk after `]`).
 */
export function hostName(host: string): string | undefined {
  const h = host.trim().toLowerCase()
  const v6 = /^\[([0-9a-f:.]+)\](?::(\d{1,5}))?$/.exec(h)
  if (v6) return isIP(v6[1]!) === 6 ? v6[1] : undefined
  const m = /^([a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(h)
  return m ? m[1] : undefined
}

/** True for `localhost` and loopback IP literals (127.0.0.0/8, ::1), compared as parsed addresses. */
export function isLoopbackName(name: string): boolean {
  if (name === 'localhost') return true
  if (isIP(name) === 4) return name.split('.')[0] === '127'
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1'
  return false
}

/** The Host check's options (guard.ts `GuardOptions.allowedHosts`): undefined = no Host check. */
export interface HostRule {
  allowedHosts?: readonly string[]
}

/** Verdicts of recent Host values per rule (every request carries one; most repeat). Bounded. */
const hostVerdicts = new WeakMap<HostRule, Map<string, boolean>>()
const HOST_VERDICTS_MAX = 256

/** True when a request with this Host header value may reach the server (always, without a Host check). */
export function hostAllowed(host: string, rule: HostRule): boolean {
  const allowed = rule.allowedHosts
  if (!allowed) return true
  let seen = hostVerdicts.get(rule)
  if (!seen) hostVerdicts.set(rule, (seen = new Map()))
  const known = seen.get(host)
  if (known !== undefined) return known
  const name = hostName(host)
  const ok = name !== undefined && (isLoopbackName(name) || allowed.includes(name))
  if (seen.size >= HOST_VERDICTS_MAX) seen.clear()
  seen.set(host, ok)
  return ok
}
