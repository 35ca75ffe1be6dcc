/**
 * The undo store's `state.json` (docs/undo.md "The shadow store"): which turns are committed, the
 * position, an operation in progress and the turns that changed no file.
 *
 * In memory, snaps are numbers (`snap-000042` is 42), oldest first and strictly ascending: a commit
 * appends the next number after the applied ones, dropping the redo branch. On disk (version 2)
 * both lists are runs of consecutive numbers, `[[1, 4000]]`, so the file a turn rewrites stays a
 * few bytes long however many turns the session has had (version 1 listed every id, and was
 * rewritten whole each turn). Version 1 is still read.
 */

export interface Op {
  kind: 'undo' | 'redo'
  from: number
  to: number
  /** Marks the displaced.json files this operation wrote (a restart trusts only those). */
  nonce: string
}

export interface State {
  /** Number of the next snap (turns committed so far + 1; clear() starts again). */
  next: number
  /** Committed turns' snap numbers, oldest first, strictly ascending. */
  snaps: readonly number[]
  head: number
  op?: Op
  /** Snaps of turns that changed no file (no directory), ascending, each one of `snaps`. */
  empty: readonly number[]
}

/** More turns than any session is given: a `state.json` that claims more is refused, not expanded. */
export const MAX_SNAPS = 1_000_000

const SNAP_RE = /^snap-(\d{6,})$/

export const freshState = (): State => ({ next: 1, snaps: [], head: 0, empty: [] })

export const snapId = (n: number): string => `snap-${String(n).padStart(6, '0')}`

/** The number of a snap directory's name (`snap-000042` → 42), or undefined for any other name. */
export function snapNumber(id: string): number | undefined {
  const m = SNAP_RE.exec(id)
  const n = m ? Number(m[1]) : NaN
  return Number.isSafeInteger(n) && n >= 1 && snapId(n) === id ? n : undefined
}

/** Index of the first element of ascending `xs` greater than `n`. */
function above(xs: readonly number[], n: number): number {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (xs[mid]! <= n) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Whether snap `n` is one of a turn that changed no file. */
export function isEmptySnap(st: State, n: number): boolean {
  const i = above(st.empty, n) - 1
  return i >= 0 && st.empty[i] === n
}

/** `st` after committing snap `st.next` at the position: the redo branch is dropped. */
export function committed(st: State, empty: boolean): State {
  const snaps = [...st.snaps.slice(0, st.head), st.next]
  // Snaps ascend, so the dropped ones are the last: the empty ones kept are a prefix.
  const last = st.head > 0 ? st.snaps[st.head - 1]! : 0
  const kept = st.empty.slice(0, above(st.empty, last))
  return { next: st.next + 1, snaps, head: st.head + 1, empty: empty ? [...kept, st.next] : kept }
}

/** Ascending numbers as runs of consecutive ones: [1, 2, 3, 7] → [[1, 3], [7, 7]]. */
function runs(xs: readonly number[]): [number, number][] {
  const out: [number, number][] = []
  for (const n of xs) {
    const r = out[out.length - 1]
    if (r && r[1] + 1 === n) r[1] = n
    else out.push([n, n])
  }
  return out
}

/** What `state.json` holds (version 2). */
export function encodeState(st: State): Record<string, unknown> {
  return {
    version: 2,
    next: st.next,
    head: st.head,
    snaps: runs(st.snaps),
    ...(st.empty.length > 0 ? { empty: runs(st.empty) } : {}),
    ...(st.op ? { op: st.op } : {}),
  }
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0

/** Version 1's list of ids, as numbers (each a canonical `snap-NNNNNN`). */
function fromIds(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.length > MAX_SNAPS) throw new Error(`state.json: bad ${what}`)
  return v.map((id) => {
    const n = typeof id === 'string' ? snapNumber(id) : undefined
    if (n === undefined) throw new Error(`state.json: bad ${what}`)
    return n
  })
}

/** Version 2's runs, expanded; every number below `next`, at most MAX_SNAPS of them. */
function fromRuns(v: unknown, next: number, what: string): number[] {
  if (!Array.isArray(v)) throw new Error(`state.json: bad ${what}`)
  const out: number[] = []
  for (const r of v) {
    const [a, b] = Array.isArray(r) && r.length === 2 ? (r as unknown[]) : []
    if (!isCount(a) || !isCount(b) || a < 1 || a > b || b >= next || b - a + 1 > MAX_SNAPS - out.length)
      throw new Error(`state.json: bad ${what}`)
    for (let n = a; n <= b; n++) out.push(n)
  }
  return out
}

const ascending = (xs: readonly number[]): boolean => xs.every((n, i) => i === 0 || xs[i - 1]! < n)

/** A stored state (version 1 or 2), checked; throws on anything else. */
export function parseState(v: unknown): State {
  if (!isPlainObject(v) || (v.version !== 1 && v.version !== 2))
    throw new Error('state.json: not a version 1 or 2 state')
  const { next, head, op } = v
  if (!Number.isSafeInteger(next) || (next as number) < 1) throw new Error('state.json: bad next')
  const list = (x: unknown, what: string): number[] =>
    v.version === 1 ? fromIds(x, what) : fromRuns(x, next as number, what)
  const snaps = list(v.snaps, 'snaps')
  if (!ascending(snaps) || (snaps.at(-1) ?? 0) >= (next as number)) throw new Error('state.json: bad snaps')
  if (!isCount(head) || head > snaps.length) throw new Error('state.json: bad head')
  const empty = v.empty === undefined ? [] : [...new Set(list(v.empty, 'empty'))].sort((a, b) => a - b)
  const known = new Set(snaps)
  if (!empty.every((n) => known.has(n))) throw new Error('state.json: bad empty')
  const st: State = { next: next as number, snaps, head, empty }
  if (op !== undefined) {
    const o = op as Partial<Op>
    const inRange = (n: unknown): boolean => isCount(n) && n <= snaps.length
    if (
      !isPlainObject(op) ||
      (o.kind !== 'undo' && o.kind !== 'redo') ||
      !inRange(o.from) ||
      !inRange(o.to) ||
      typeof o.nonce !== 'string'
    )
      throw new Error('state.json: bad op')
    st.op = { kind: o.kind, from: o.from as number, to: o.to as number, nonce: o.nonce }
  }
  return st
}
