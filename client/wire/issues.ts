/**
 * The one way validation failures are described, on every surface: a zod error (or its issues)
 * as a readable line (`path: message; …`, `(root)` for the value itself) or as structured rows
 * `{path, message, code}` for machine-readable error details (HTTP `detail`, JSON-RPC `data`).
 * A value that matches none of a union's forms says what each form expects (`missing: expected
 * string or array` rather than zod's bare "Invalid input").
 */
interface IssueLike {
  readonly path: readonly PropertyKey[]
  readonly message: string
  readonly code?: string
  /** invalid_type: the type expected. */
  readonly expected?: string
  /** invalid_union: each form's issues, their paths relative to the value. */
  readonly errors?: readonly (readonly IssueLike[])[]
}
type Issues = { readonly issues: readonly IssueLike[] } | readonly IssueLike[]

const list = (x: Issues): readonly IssueLike[] =>
  Array.isArray(x) ? x : (x as { issues: readonly IssueLike[] }).issues
const pathOf = (i: IssueLike): string => i.path.map(String).join('.')

/** The value's own type did not match (an issue at the value itself, not inside it). */
const typeMismatch = (branch: readonly IssueLike[]): IssueLike | undefined =>
  branch.find((i) => i.path.length === 0 && i.code === 'invalid_type' && i.expected)

/** What an issue says, with a union's forms spelled out. */
function messageOf(i: IssueLike): string {
  if (i.code !== 'invalid_union' || !i.errors?.length) return i.message
  const mismatches = i.errors.map(typeMismatch)
  const accepted = [...new Set(mismatches.map((m) => m?.expected).filter((e): e is string => Boolean(e)))]
  if (mismatches.every(Boolean)) {
    const received = /received (\w+)$/.exec(mismatches[0]!.message)?.[1]
    const one = accepted.join(' or ')
    return received === 'undefined'
      ? `missing: expected ${one}`
      : `expected ${one}${received ? `, received ${received}` : ''}`
  }
  // The value has the right type for some form but fails inside it: say what is wrong there.
  const inner = i.errors
    .filter((b, n) => !mismatches[n])
    .map((b) => b.map((e) => `${pathOf(e) || '(root)'}: ${messageOf(e).replace(/^Invalid input: /, '')}`).join(', '))
    .join(' | ')
  return accepted.length ? `expected ${accepted.join(' or ')}, or else: ${inner}` : inner
}

/** `a.b: message; c: message` (`(root)` for an issue about the whole value). */
export function formatIssues(x: Issues): string {
  return list(x)
    .map((i) => `${pathOf(i) || '(root)'}: ${messageOf(i)}`)
    .join('; ')
}

/** Structured rows for error payloads. */
export function issueRows(x: Issues): { path: string; message: string; code: string }[] {
  return list(x).map((i) => ({ path: pathOf(i), message: messageOf(i), code: i.code ?? 'invalid' }))
}
