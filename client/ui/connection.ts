/**
 * The console's connection indicator (`#link`): `connected` once the server answered (an API call
 * or the session's event stream opening), `reconnecting` while the event stream retries after a
 * drop or a server restart, `offline` when the browser has no network or the server stayed
 * unreachable for several attempts (the stream keeps retrying behind it). `data-state` carries
 * the state for styling and tests.
 */
import type { RetryInfo } from '../index.ts'
import { byId } from './dom.ts'

export type LinkState = 'connected' | 'reconnecting' | 'offline'

/** Failed attempts in a row after which an unreachable server counts as offline. */
const OFFLINE_AFTER = 3

export class Link {
  state: LinkState | undefined
  /** Called each time the server answers again after a drop (not on every answer). */
  onReconnected: (() => void) | undefined

  set(state: LinkState, detail = ''): void {
    const back = state === 'connected' && this.state !== undefined && this.state !== 'connected'
    this.state = state
    const node = byId('link')
    node.dataset.state = state
    byId('link-text').textContent = state
    node.title = detail || state
    byId('link-detail').textContent = detail
    if (back) this.onReconnected?.()
  }

  connected(detail = ''): void {
    this.set('connected', detail)
  }

  /** Before each wait of the event stream's backoff. */
  retrying(r: RetryInfo): void {
    const wait = `retrying in ${Math.max(1, Math.round(r.delayMs / 1000))} s`
    if (!navigator.onLine) this.set('offline', `no network · ${wait}`)
    else if (r.attempt >= OFFLINE_AFTER) this.set('offline', `server unreachable · ${wait}`)
    else this.set('reconnecting', wait)
  }

  /** An API call could not reach the server at all (no HTTP answer). */
  unreachable(): void {
    this.set(navigator.onLine ? 'reconnecting' : 'offline', navigator.onLine ? 'server unreachable' : 'no network')
  }
}
