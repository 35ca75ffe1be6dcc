/**
 * The ACP network arms: ACP v1 over Streamable HTTP (`acp-http`) and over WebSocket (`acp-ws`),
 * spoken through the official SDK's own client transports (`createHttpStream`,
 * `createWebSocketStream` of `@agentclientprotocol/sdk`), so the kit's wire is the SDK's
 * exactly: the `initialize` POST and its `Acp-Connection-Id`, the connection and session SSE
 * streams, affinity cookies, one JSON-RPC message per WebSocket text frame. Every message both
 * ways goes through the sniffer, as on stdio. A URL and an optional bearer token are all a
 * target needs (docs/conformance.md, "ACP over the network").
 */
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client'
import { createWebSocketStream, type WebSocketConstructor } from '@agentclientprotocol/sdk/experimental/ws-client'
import { WebSocket } from 'ws'
import type { Violation } from '../sniffer.ts'
import { Inbox } from './queue.ts'
import type { FrameSniffer } from './stdio.ts'
import type { Arm } from './types.ts'

export type AcpNetTransport = 'acp-http' | 'acp-ws'

/** A JSON-RPC message as the SDK's streams carry it. */
type AnyMessage = ReturnType<typeof createHttpStream> extends { writable: WritableStream<infer M> } ? M : never

export interface AcpNetTarget {
  /** The agent's ACP endpoint: `http(s)://…/acp` for acp-http, `ws(s)://…/acp` for acp-ws. */
  url: string
  /** Sent as `Authorization: Bearer <token>` on every request and on the WebSocket upgrade. */
  token?: string
  /** The workspace the target serves (`${cwd}` in a transcript, `cwd` of `session/new`). */
  cwd: string
  /** Diagnostics of the process serving the endpoint, when the kit started it (its stderr tail). */
  log?: () => string
}

/** An `http(s)` URL for acp-http, a `ws(s)` one for acp-ws (an http URL is turned into ws for acp-ws). */
export function endpointFor(transport: AcpNetTransport, url: string): string {
  const u = new URL(url)
  if (transport === 'acp-ws' && /^https?:$/.test(u.protocol)) u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
  if (transport === 'acp-http' && /^wss?:$/.test(u.protocol)) u.protocol = u.protocol === 'wss:' ? 'https:' : 'http:'
  return u.href
}

/**
 * `ws`'s WebSocket, with an error listener of its own: closing a socket still connecting makes
 * `ws` emit an error after the SDK has let go of it, which would otherwise be uncaught. The SDK's
 * listeners still see every error.
 */
class KitWebSocket extends WebSocket {
  constructor(...args: ConstructorParameters<typeof WebSocket>) {
    super(...args)
    this.on('error', () => {})
  }
}

export class AcpNetArm implements Arm {
  readonly name: AcpNetTransport
  readonly cwd: string
  readonly #inbox = new Inbox<unknown>()
  readonly #sniffer: FrameSniffer
  readonly #writer: WritableStreamDefaultWriter<AnyMessage>
  readonly #reader: ReadableStreamDefaultReader<AnyMessage>
  readonly #pump: Promise<void>
  readonly #target: AcpNetTarget
  #writes: Promise<void> = Promise.resolve()
  #closed = false
  /** Why the connection ended, when it ended with an error (the SDK's own words). */
  error: string | undefined
  /** The peer's name and version from its `initialize` answer (ACP v1 `agentInfo`). */
  agentInfo: { name: string; version: string } | undefined

  constructor(transport: AcpNetTransport, target: AcpNetTarget, sniffer: FrameSniffer) {
    this.name = transport
    this.cwd = target.cwd
    this.#target = target
    this.#sniffer = sniffer
    const url = endpointFor(transport, target.url)
    const headers: Record<string, string> = target.token ? { Authorization: `Bearer ${target.token}` } : {}
    const stream =
      transport === 'acp-http'
        ? createHttpStream(url, { headers })
        : createWebSocketStream(url, { headers, WebSocket: KitWebSocket as unknown as WebSocketConstructor })
    this.#writer = stream.writable.getWriter()
    this.#reader = stream.readable.getReader()
    this.#pump = this.#read()
  }

  async #read(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.#reader.read()
        if (done) break
        this.#sniffer.frame('out', value)
        this.#noteAgent(value)
        this.#inbox.push(value)
      }
    } catch (err) {
      if (!this.#closed) this.error = describe(err)
    } finally {
      this.#inbox.close()
    }
  }

  #noteAgent(m: unknown): void {
    const info = (m as { result?: { agentInfo?: { name?: unknown; version?: unknown } } } | null)?.result?.agentInfo
    if (this.agentInfo || typeof info?.name !== 'string') return
    this.agentInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : '' }
  }

  /**
   * Hands the message to the SDK transport. Its writes run in order; a write the transport
   * refuses (a closed connection, a rejected POST of a notification) ends the connection, which
   * the reader reports. The call does not wait for the agent: over Streamable HTTP the
   * `initialize` POST carries the answer itself.
   */
  async send(message: unknown, opts: { invalid?: boolean }): Promise<void> {
    if (this.#closed || this.error !== undefined)
      throw new Error(`the ${this.name} connection is closed${this.error ? `: ${this.error}` : ''}`)
    this.#sniffer.frame('in', message, opts)
    const write = this.#writer.write(message as AnyMessage)
    this.#writes = write.catch((err: unknown) => {
      this.error ??= describe(err)
    })
  }

  async sendRaw(): Promise<void> {
    throw new Error(`${this.name} sends JSON-RPC messages through the SDK transport; raw bytes are stdio's`)
  }

  next(ms: number): Promise<unknown> {
    return this.#inbox.next(ms)
  }

  violations(): Violation[] {
    return [...this.#sniffer.violations]
  }

  /** The connection's end and the serving process's last lines, for a failure report. */
  diagnostics(): string[] {
    const log = (this.#target.log?.() ?? '')
      .trim()
      .split('\n')
      .slice(-5)
      .filter(Boolean)
      .map((l) => `stderr: ${l.slice(0, 300)}`)
    return [...(this.error ? [`connection: ${this.error.slice(0, 300)}`] : []), ...log]
  }

  /** Closes the connection (HTTP: DELETE of the connection; WebSocket: a close frame). */
  async dispose(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#writes
    const closing = this.#writer.close().catch(() => {})
    let timer: NodeJS.Timeout | undefined
    await Promise.race([closing, new Promise<void>((r) => (timer = setTimeout(r, 2000)))])
    clearTimeout(timer)
    await this.#reader.cancel().catch(() => {})
    await this.#pump
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const data = (err as { data?: unknown }).data
  const cause = (err as { cause?: { message?: string } }).cause?.message
  return `${err.message}${cause ? ` (${cause})` : ''}${data === undefined ? '' : ` ${JSON.stringify(data).slice(0, 300)}`}`
}
