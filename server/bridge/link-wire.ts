/**
 * What the relay (relay.ts) and the editor's ferret (link.ts) say to each other besides ACP
 * (docs/bridge.md, docs/decisions/0328-cloud-bridge-relay.md): the paths, the one control message,
 * the close codes, and how a bridge URL is shown. The ACP messages themselves travel unchanged,
 * one JSON-RPC message per WebSocket text frame, on a channel socket of their own per remote client.
 */
import { tokenMatches } from '../http/auth.ts'

/** The editor's control link. */
export const BRIDGE_PATH = '/bridge'
/** A channel socket the editor dials for one remote client: `<bridge path>/channels/<id>`. */
export const CHANNELS = '/channels/'
/** Where remote ACP clients connect. */
export const CLIENT_PATH = '/acp'

/** relay → ferret on the control link: a remote client is waiting; dial `<bridge URL>/channels/<channel>`. */
export interface OpenChannel {
  type: 'open'
  channel: string
}

/** The control message, or undefined for anything else (ignored: a newer relay may say more). */
export function parseOpenChannel(text: string): OpenChannel | undefined {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof v !== 'object' || v === null) return undefined
  const { type, channel } = v as { type?: unknown; channel?: unknown }
  return type === 'open' && typeof channel === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(channel)
    ? { type, channel }
    : undefined
}

/** Close codes of the relay (4000-4999: the application's range). */
export const CLOSE = {
  /** A newer control link with the same token replaced this one. */
  replaced: 4000,
  /** The editor's link went away: reconnect, `initialize`, `session/load`. */
  editorDetached: 4001,
  /** No message either way for the idle timeout. */
  idle: 4002,
  /** The other end of the channel closed abnormally. */
  peerGone: 4003,
} as const

/** The bearer token of an upgrade request's `Authorization` header, if any. */
export function bearer(header: string | undefined): string | undefined {
  const m = header && !header.includes(',') ? /^bearer[ \t]+(\S+)\s*$/i.exec(header) : null
  return m?.[1]
}

/** True when `presented` is one of `tokens` (each compared in constant time, all of them every time). */
export function anyTokenMatches(presented: string | undefined, tokens: readonly string[]): boolean {
  let found = false
  for (const t of tokens) if (tokenMatches(presented, t)) found = true
  return found
}

/** A bridge URL as logs and `bridgeStatus` show it: no credentials, query or fragment. */
export function shownUrl(url: URL): string {
  const u = new URL(url.href)
  u.username = ''
  u.password = ''
  u.search = ''
  u.hash = ''
  return u.href
}

/** `<bridge URL>/channels/<id>`, keeping the bridge URL's query (a proxy may route on it). */
export function channelUrl(bridge: URL, id: string): URL {
  const u = new URL(bridge.href)
  u.pathname = `${u.pathname.replace(/\/+$/, '')}${CHANNELS}${id}`
  return u
}
