/**
 * Requirement ids, transports and surfaces: the vocabulary every scenario, report and
 * expected-failures file shares. An id is dot-separated lowercase words
 * (`acp.v1.cancel.stop-reason`); it never changes once published (docs/decisions/0100).
 */

/**
 * The wires a scenario can bind to. `http` is REST plus its SSE event streams. `acp-http` (ACP
 * Streamable HTTP) and `acp-ws` (ACP over WebSocket) are ACP v1 over the network: every
 * requirement bound to `acp-v1` binds to them too (corpus/load.ts), and one that cannot apply
 * there is reported not applicable (run/applicable.ts).
 */
export const TRANSPORTS = ['acp-v1', 'acp-http', 'acp-ws', 'acp-otter', 'acp-ferret', 'http', 'rpc'] as const
export type TransportId = (typeof TRANSPORTS)[number]

/** ACP v1 over the network, bound wherever `acp-v1` is. */
export const ACP_NET_TRANSPORTS = ['acp-http', 'acp-ws'] as const
export type AcpNetTransportId = (typeof ACP_NET_TRANSPORTS)[number]
export const isAcpNet = (t: TransportId): t is AcpNetTransportId => t === 'acp-http' || t === 'acp-ws'

/** Report grouping: the product surface a requirement belongs to (from its id). */
export const SURFACES = ['acp', 'http', 'sse', 'rpc', 'core'] as const
export type SurfaceId = (typeof SURFACES)[number]

export const LEVELS = ['MUST', 'SHOULD', 'MAY'] as const
export type Level = (typeof LEVELS)[number]

export const ID_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$/

export function surfaceOf(id: string): SurfaceId {
  if (id.startsWith('http.sse.')) return 'sse'
  const head = id.split('.')[0]!
  return (SURFACES as readonly string[]).includes(head) ? (head as SurfaceId) : 'core'
}

/** `--only` globs: `*` matches within one dot-separated word run, `**` across dots. */
export function globToRegExp(glob: string): RegExp {
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
    } else if (c === '*') re += '[^.]*'
    else if (c === '?') re += '.'
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`)
}

/** True when `id` matches any of the globs (no globs: everything matches). A glob ending in `.*` also matches deeper ids. */
export function matchesAny(id: string, globs: readonly string[]): boolean {
  if (!globs.length) return true
  return globs.some((g) => globToRegExp(g).test(id) || (g.endsWith('.*') && id.startsWith(g.slice(0, -1))))
}
