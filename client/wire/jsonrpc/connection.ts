/**
 * One JSON-RPC 2.0 peer over a newline-delimited byte stream pair: reads frames, classifies
 * them, routes requests and notifications to a router, correlates responses to the requests
 * this side sent, and writes every outgoing message through one serialised writer.
 * Knows JSON-RPC, not ACP: what a method means is the router's business.
 */
import type { Readable, Writable } from 'node:stream'
import { readFrames, LineWriter } from '../line-stream.ts'
import type { Frame } from '../framer.ts'
import { CODES, RpcError, toWireError, type InternalErrorMapper, type WireError } from './errors.ts'
import { parseLine, type Id, type Incoming } from './messages.ts'

/** Where the connection reports what it drops or what failed (stderr on stdio transports: stdout is the wire). */
export interface WireLogger {
  debug(msg: string, data?: unknown): void
  warn(msg: string, data?: unknown): void
  error(msg: string, data?: unknown): void
}

export interface Router {
  /** Answer a request: return the result, or throw (RpcError or anything, mapped). */
  request(method: string, params: unknown, ctx: { id: Id; signal: AbortSignal }): Promise<unknown>
  /** Handle a notification; errors are logged, never answered. */
  notification(method: string, params: unknown): Promise<void>
  /** How non-RpcError failures look on the wire (the dialect decides). */
  internalError: InternalErrorMapper
}

/** Requests and notifications handled at once before the next input frame waits (backpressure). */
export const MAX_HANDLING = 1024

export interface ConnectionOptions {
  input: Readable
  output: Writable
  maxLineBytes: number
  logger: WireLogger
  /** Called for each raw frame sent or received (the test sniffer hooks in here). */
  onWire?: (dir: 'in' | 'out', message: unknown) => void
}

export class Connection {
  readonly #opts: ConnectionOptions
  readonly #writer: LineWriter
  #router: Router | undefined
  #nextId = 0
  readonly #pending = new Map<Id, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>()
  readonly #inflight = new Map<Id, AbortController>()
  /** Requests this side withdrew: their late responses are dropped quietly. */
  readonly #withdrawn = new Set<Id>()
  readonly #abort = new AbortController()
  readonly #tasks = new Set<Promise<void>>()
  /** Wakes the reader waiting for a handler to finish (backpressure). */
  #taskSettled: (() => void) | undefined

  constructor(opts: ConnectionOptions) {
    this.#opts = opts
    this.#writer = new LineWriter(opts.output)
  }

  /** Aborted when the input ends. */
  get signal(): AbortSignal {
    return this.#abort.signal
  }

  /** Read until the input closes; resolves after in-flight requests were answered. */
  async serve(router: Router): Promise<void> {
    this.#router = router
    try {
      // Backpressure: the next frame is read only once the output takes more and fewer than
      // MAX_HANDLING requests are being handled, so a peer that stops reading its answers stops
      // being read instead of growing a queue of them.
      await readFrames(this.#opts.input, this.#opts.maxLineBytes, async (f) => {
        await this.#writer.ready()
        while (this.#tasks.size >= MAX_HANDLING) {
          await new Promise<void>((resolve) => (this.#taskSettled = resolve))
          await this.#writer.ready()
        }
        this.#onFrame(f)
      })
    } catch (err) {
      // A destroyed input (shutdown) or a broken pipe ends the connection like EOF.
      this.#opts.logger.debug('connection input ended with an error', err)
    } finally {
      this.#abort.abort(new Error('connection closed'))
      for (const c of this.#inflight.values()) c.abort(new Error('connection closed'))
      // No response can arrive once the input ended: requests to the peer fail now, so the
      // handlers waiting on them (a permission asked of the client) can finish.
      for (const p of this.#pending.values()) p.reject(new Error('connection closed'))
      this.#pending.clear()
      await Promise.allSettled([...this.#tasks])
      await this.#writer.flush()
    }
  }

  /** Send a notification to the peer. */
  notify(method: string, params: unknown): Promise<void> {
    return this.#send({ jsonrpc: '2.0', method, params })
  }

  /**
   * Send a request to the peer and wait for its response. Aborting `signal` withdraws it: the
   * peer gets `$/cancel_request {requestId}` and the promise rejects with the abort reason.
   */
  request(method: string, params: unknown, opts: { signal?: AbortSignal } = {}): Promise<unknown> {
    const id = this.#nextId++
    const signal = opts.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (this.#abort.signal.aborted) return Promise.reject(new Error('connection closed'))
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.#pending.delete(id)) return
        // The peer may still answer (an ACP client answers a withdrawn permission `cancelled`).
        this.#withdrawn.add(id)
        if (this.#withdrawn.size > 1024) this.#withdrawn.delete(this.#withdrawn.values().next().value as Id)
        void this.notify('$/cancel_request', { requestId: id })
        reject(signal!.reason)
      }
      const settle =
        <T>(fn: (v: T) => void) =>
        (v: T): void => {
          signal?.removeEventListener('abort', onAbort)
          fn(v)
        }
      this.#pending.set(id, { resolve: settle(resolve), reject: settle(reject) })
      signal?.addEventListener('abort', onAbort, { once: true })
      void this.#send({ jsonrpc: '2.0', id, method, params })
    })
  }

  /** Resolves once everything written so far reached the output stream. */
  flush(): Promise<void> {
    return this.#writer.flush()
  }

  #send(message: unknown): Promise<void> {
    this.#opts.onWire?.('out', message)
    return this.#writer.write(message)
  }

  #respond(id: Id, body: { result: unknown } | { error: WireError }): Promise<void> {
    return this.#send({ jsonrpc: '2.0', id, ...body })
  }

  #onFrame(frame: Frame): void {
    if (frame.kind === 'too_long') {
      void this.#respond(null, {
        error: RpcError.invalidRequest(
          `message of ${frame.bytes} bytes exceeds the ${this.#opts.maxLineBytes}-byte limit`,
        ).toJSON(),
      })
      return
    }
    if (frame.kind === 'invalid_utf8') {
      void this.#respond(null, { error: RpcError.parseError('message is not valid UTF-8').toJSON() })
      return
    }
    const msg = parseLine(frame.text)
    this.#opts.onWire?.('in', msg.kind === 'invalid' ? frame.text : safeParse(frame.text))
    this.#route(msg)
  }

  #route(msg: Incoming): void {
    const router = this.#router!
    switch (msg.kind) {
      case 'invalid':
        void this.#respond(msg.id, { error: msg.error.toJSON() })
        return
      case 'response': {
        const p = this.#pending.get(msg.id)
        if (!p && this.#withdrawn.delete(msg.id)) return
        if (!p) {
          this.#opts.logger.warn('response to an unknown request id dropped', { id: msg.id })
          return
        }
        this.#pending.delete(msg.id)
        if (msg.error) p.reject(new RpcError(msg.error.code, msg.error.message, msg.error.data))
        else p.resolve(msg.result)
        return
      }
      case 'notification':
        this.#track(
          router
            .notification(msg.method, msg.params)
            .catch((err) => this.#opts.logger.warn(`notification ${msg.method} failed`, err)),
        )
        return
      case 'request': {
        const ctl = new AbortController()
        if (this.#inflight.has(msg.id)) {
          void this.#respond(msg.id, {
            error: RpcError.invalidRequest(`request id ${JSON.stringify(msg.id)} is already in flight`).toJSON(),
          })
          return
        }
        this.#inflight.set(msg.id, ctl)
        this.#track(
          router
            .request(msg.method, msg.params, { id: msg.id, signal: ctl.signal })
            .then(
              (result) => this.#respond(msg.id, { result: result ?? {} }),
              (err) => {
                // The stack goes to the log (stderr), never to the peer.
                if (!RpcError.is(err))
                  this.#opts.logger.error(
                    `request ${msg.method} failed`,
                    err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : err,
                  )
                return this.#respond(msg.id, { error: toWireError(err, router.internalError) })
              },
            )
            .finally(() => this.#inflight.delete(msg.id)),
        )
        return
      }
    }
  }

  /** Abort the handler of an in-flight request (for `$/cancel_request`). */
  cancelInflight(id: Id): boolean {
    const c = this.#inflight.get(id)
    c?.abort(new RpcError(CODES.requestCancelled, 'Request cancelled'))
    return Boolean(c)
  }

  #track(p: Promise<unknown>): void {
    const t = p.then(
      () => undefined,
      () => undefined,
    )
    this.#tasks.add(t)
    void t.finally(() => {
      this.#tasks.delete(t)
      const wake = this.#taskSettled
      this.#taskSettled = undefined
      wake?.()
    })
  }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
