/**
 * What the relay (relay.ts) and the editor's ferret (link.ts) say to each other besides ACP, as
 * specs/asyncapi/bridge.asyncapi.yaml describes it (docs/bridge.md,
 * docs/decisions/0328-cloud-bridge-relay.md): the paths, the one control message and the close
 * codes (generated from that spec), the bearer tokens, and how a bridge URL is shown. The ACP
 * messages themselves travel unchanged, one JSON-RPC message per WebSocket text frame, on a
 * channel socket of their own per remote client.
 */
import { RELAY_CLOSE_CODES, relayAddresses, relayControl, type OpenChannel } from '../../generated/bridge/relay.gen.ts'
import { tokenMatches } from '../http/auth.ts'

/** The editor's control link. */
export const BRIDGE_PATH = relayAddresses.control
/** A channel socket the editor dials for one remote client: `<bridge path>/channels/<id>`. */
export const CHANNELS = relayAddresses.channel.slice(BRIDGE_PATH.length, -'{channel}'.length)
/** Where remote ACP clients connect. */
export const CLIENT_PATH = relayAddresses.client

export type { OpenChannel }

/** The control message, or undefined for anything else (ignored: a newer relay may say more). */
export function parseOpenChannel(text: string): OpenChannel | undefined {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return undefined
  }
  const r = relayControl.open.schema.safeParse(v)
  return r.success ? r.data : undefined
}

/** The relay's close codes (4000-4999: the application's range; what each means: the bridge spec). */
export const CLOSE = RELAY_CLOSE_CODES

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
