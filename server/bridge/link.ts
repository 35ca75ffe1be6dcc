/**
 * The editor side of the cloud bridge (docs/bridge.md): `chimera ferret serve --bridge <url>`
 * dials OUT to a relay (`chimera relay serve`) over WebSocket (TLS when the URL is wss://) with its
 * bridge token, and keeps that control link up, redialling with exponential backoff (jittered,
 * capped) when it fails or drops. Nothing listens on the editor's machine. For each remote client
 * the relay announces on the control link, ferret dials one channel socket and serves the client's
 * ACP connection on it with the same ACP server as stdio (acp-channel.ts), over the process's one
 * session manager: the editor's sessions are the remote client's sessions.
 *
 * When the link drops, every channel ends with it (the relay closes their clients too). A channel
 * is a network connection (`detach`): its end leaves the sessions as they were — turns keep running
 * and logging, permission requests stay pending for the editor — and a client that reconnects (`initialize` + `session/load`) gets the
 * session's history replayed from the log, so nothing is lost (docs/decisions/0329-bridge-reconnect.md).
 */
import { WebSocket, type RawData } from 'ws'
import type { BridgeStatus } from '../../generated/schemas.gen.ts'
import type { AcpChannelOptions } from '../acp/serve-acp-channel.ts'
import type { Logger } from '../log.ts'
import { serveOverWebSocket, frameText } from './acp-channel.ts'
import { channelUrl, parseOpenChannel, shownUrl } from './link-wire.ts'

export interface BridgeLinkOptions {
  /** The relay's bridge URL, `ws://` or `wss://` (…/bridge). */
  url: URL
  /** The bridge token the relay expects of this editor (never logged). */
  token: string
  logger: Logger
  /** How each remote client's ACP connection is served (the process's session manager, its agent). */
  acp: AcpChannelOptions
  /** First retry delay and the cap, milliseconds (defaults 500 and 30 000). */
  backoff?: { initialMs: number; maxMs: number }
  /** How often the link is pinged; no pong by the next ping ends it (default 30 000). */
  pingIntervalMs?: number
  /** The largest message accepted from the relay (default 32 MiB, as the ACP stdio server). */
  maxMessageBytes?: number
}

const DIAL_TIMEOUT_MS = 15_000

export class BridgeLink {
  readonly #o: BridgeLinkOptions
  readonly #relay: string
  readonly #channels = new Set<WebSocket>()
  #ws: WebSocket | undefined
  #attached = false
  #since = new Date()
  #reason = 'dialing the relay'
  #lastError: { text: string; at: Date } | undefined
  #retryAt: Date | undefined
  #failures = 0
  #timer: NodeJS.Timeout | undefined
  #ping: NodeJS.Timeout | undefined
  #closed = false
  readonly #served = new Set<Promise<void>>()

  constructor(o: BridgeLinkOptions) {
    this.#o = o
    this.#relay = shownUrl(o.url)
  }

  /** Dial now (and again after every failure until close()). */
  start(): void {
    this.#dial()
  }

  status(): BridgeStatus {
    const at = (d: Date) => d.toISOString()
    return {
      attached: this.#attached,
      relay: this.#relay,
      since: at(this.#since),
      ...(this.#attached ? {} : { reason: this.#reason }),
      ...(this.#lastError ? { lastError: this.#lastError.text, lastErrorAt: at(this.#lastError.at) } : {}),
      ...(!this.#attached && this.#retryAt ? { retryAt: at(this.#retryAt) } : {}),
      failures: this.#failures,
      clients: this.#channels.size,
    }
  }

  /** Stop dialling, close the link and its channels, and wait for the channels' ACP servers to end. */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    clearInterval(this.#ping)
    this.#ws?.close(1001, 'the editor is shutting down')
    for (const c of this.#channels) c.close(1001, 'the editor is shutting down')
    await Promise.all(this.#served)
  }

  #dial(): void {
    if (this.#closed) return
    this.#retryAt = undefined
    const ws = new WebSocket(this.#o.url, {
      headers: { authorization: `Bearer ${this.#o.token}` },
      handshakeTimeout: DIAL_TIMEOUT_MS,
      maxPayload: this.#o.maxMessageBytes ?? 32 * 1024 * 1024,
    })
    this.#ws = ws
    let failure: string | undefined
    ws.on('unexpected-response', (_req, res) => {
      failure = `the relay answered HTTP ${res.statusCode}${res.statusCode === 401 ? ' (it refused the bridge token)' : ''}`
      res.resume()
      ws.terminate()
    })
    ws.on('error', (err) => {
      failure ??= err.message
    })
    ws.on('open', () => {
      this.#attached = true
      this.#since = new Date()
      this.#failures = 0
      this.#o.logger.info(`bridge attached to ${this.#relay}`)
      this.#keepAlive(ws)
    })
    ws.on('message', (data: RawData) => {
      const open = parseOpenChannel(frameText(data))
      if (open) this.#channel(open.channel)
    })
    ws.on('close', (code, why) => {
      clearInterval(this.#ping)
      const wasAttached = this.#attached
      this.#attached = false
      this.#since = new Date()
      if (this.#ws === ws) this.#ws = undefined
      // The relay closes the clients with the link; the channels end here too.
      for (const c of this.#channels) c.close(1001, 'the bridge link went down')
      if (this.#closed) return
      const text = failure ?? `the link closed (${code}${why.length ? ` ${why.toString('utf8')}` : ''})`
      this.#lastError = { text, at: new Date() }
      this.#failures++
      const delay = this.#delay()
      this.#retryAt = new Date(Date.now() + delay)
      this.#reason = wasAttached ? 'the link went down; redialling' : 'the relay could not be reached; redialling'
      this.#o.logger.warn(
        `bridge ${wasAttached ? 'link lost' : 'dial failed'}: ${text}; next attempt in ${delay} ms (${this.#failures} failed)`,
      )
      this.#timer = setTimeout(() => this.#dial(), delay)
    })
  }

  /** Exponential backoff from the first failure, capped, with jitter (half to all of it). */
  #delay(): number {
    const { initialMs, maxMs } = this.#o.backoff ?? { initialMs: 500, maxMs: 30_000 }
    const full = Math.min(maxMs, initialMs * 2 ** Math.min(this.#failures - 1, 30))
    return Math.round(full / 2 + (Math.random() * full) / 2)
  }

  /** Ping the relay; a link that does not answer by the next ping is ended (and redialled). */
  #keepAlive(ws: WebSocket): void {
    let alive = true
    ws.on('pong', () => (alive = true))
    this.#ping = setInterval(() => {
      if (!alive) {
        this.#o.logger.warn('bridge link: no pong from the relay; ending the link')
        ws.terminate()
        return
      }
      alive = false
      ws.ping()
    }, this.#o.pingIntervalMs ?? 30_000)
    this.#ping.unref()
  }

  /** A remote client is waiting at the relay: dial its channel and serve its ACP connection. */
  #channel(id: string): void {
    const ws = new WebSocket(channelUrl(this.#o.url, id), {
      headers: { authorization: `Bearer ${this.#o.token}` },
      handshakeTimeout: DIAL_TIMEOUT_MS,
      maxPayload: this.#o.maxMessageBytes ?? 32 * 1024 * 1024,
    })
    this.#channels.add(ws)
    let opened = false
    const served = new Promise<void>((resolve) => {
      ws.on('open', () => {
        opened = true
        this.#o.logger.info(`bridge: remote client ${id.slice(0, 8)} connected`)
        serveOverWebSocket(ws, this.#o.acp)
          .catch((err: unknown) => this.#o.logger.error(`bridge: the ACP connection of ${id.slice(0, 8)} failed`, err))
          .finally(() => {
            this.#o.logger.info(`bridge: remote client ${id.slice(0, 8)} disconnected`)
            resolve()
          })
      })
      ws.on('error', (err) => this.#o.logger.warn(`bridge: channel ${id.slice(0, 8)}: ${err.message}`))
      ws.on('unexpected-response', (_req, res) => {
        this.#o.logger.warn(`bridge: channel ${id.slice(0, 8)} refused (HTTP ${res.statusCode})`)
        res.resume()
        ws.terminate()
      })
      ws.on('close', () => {
        this.#channels.delete(ws)
        if (!opened) resolve()
      })
    })
    this.#served.add(served)
    void served.finally(() => this.#served.delete(served))
  }
}
