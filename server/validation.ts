/**
 * The one way validation failures are described, on every surface: a zod error (or its issues)
 * as a readable line (`path: message; …`, `(root)` for the value itself) or as structured rows
 * `{path, message, code}` for machine-readable error details (HTTP `detail`, JSON-RPC `data`).
 */
interface IssueLike {
  readonly path: readonly PropertyKey[]
  readonly message: string
  readonly code?: string
}
type Issues = { readonly issues: readonly IssueLike[] } | readonly IssueLike[]

const list = (x: Issues): readonly IssueLike[] => (Array.isArray(x) ? x : (x as { issues: readonly IssueLike[] }).issues)
const pathOf = (i: IssueLike): string => i.path.map(String).join('.')

/** `a.b: message; c: message` (`(root)` for an issue about the whole value). */
export function formatIssues(x: Issues): string {
  return list(x).map((i) => `${pathOf(i) || '(root)'}: ${i.message}`).join('; ')
}

/** Structured rows for error payloads. */
export function issueRows(x: Issues): { path: string; message: string; code: string }[] {
  return list(x).map((i) => ({ path: pathOf(i), message: i.message, code: i.code ?? 'invalid' }))
}
