/**
 * JSON-lines RPC (`chimera code --mode rpc`, seeds/004): reads one command per line, validates
 * it with the generated command table, dispatches it to the registered handler and always
 * acknowledges it with an RpcResponse. Bad input of any kind gets a failure response and the
 * reader keeps going. Mirrors the document's `RpcServer` / `RpcHandler` split: the server owns
 * framing and acknowledgement, the handlers own what commands do.
 */
import type { Readable, Writable } from 'node:stream'
import { rpcCommands, RPC_MAX_LINE_BYTES, type RpcCommandType, type RpcOutboundMessage } from '../../generated/rpc/jsonl.gen.ts'
import type { z } from 'zod'
import { readFrames, LineWriter } from '../framing/stdio.ts'
import type { Frame } from '../framing/ndjson.ts'
import type { Logger } from '../log.ts'

export type Command<T extends RpcCommandType> = z.output<(typeof rpcCommands)[T]['schema']>
type CommandId = string | number | null

/** What a handler may do besides returning: emit events or replies on stdout. */
export interface RpcContext {
  emit(message: RpcOutboundMessage): Promise<void>
  logger: Logger
}
/** A handler throws to fail its command; the error message becomes the response's `error`. */
export type RpcHandlers = { [T in RpcCommandType]?: (command: Command<T>, ctx: RpcContext) => unknown }

export class RpcCommandError extends Error {
  override name = 'RpcCommandError'
}

export interface RpcServerOptions {
  input: Readable
  output: Writable
  logger: Logger
  maxLineBytes?: number
  onWire?: (dir: 'in' | 'out', message: unknown) => void
}

export class RpcServer {
  readonly #opts: RpcServerOptions
  readonly #writer: LineWriter
  #handlers: RpcHandlers = {}

  constructor(opts: RpcServerOptions) {
    this.#opts = opts
    this.#writer = new LineWriter(opts.output)
  }

  setHandlers(handlers: RpcHandlers): void {
    this.#handlers = handlers
  }

  /** Write one outbound message (event or reply). */
  emit(message: RpcOutboundMessage): Promise<void> {
    this.#opts.onWire?.('out', message)
    return this.#writer.write(message)
  }

  /**
   * Read commands until stdin closes, then wait for commands still running (a `prompt` is
   * acknowledged when its turn ends) and resolve once every reply is written. Reading never
   * waits for a command to finish, so `steer` and `cancel` reach a running turn.
   */
  async run(opts: { onEnd?: () => void } = {}): Promise<void> {
    const max = this.#opts.maxLineBytes ?? RPC_MAX_LINE_BYTES
    await readFrames(this.#opts.input, max, (f) => {
      this.#track(this.#onFrame(f, max))
    })
    opts.onEnd?.()
    while (this.#inflight.size) await Promise.allSettled([...this.#inflight])
    await this.#writer.flush()
  }

  #inflight = new Set<Promise<void>>()
  #track(p: Promise<void>): void {
    const t = p.catch((err) => this.#opts.logger.error('rpc dispatch failed', err))
    this.#inflight.add(t)
    void t.finally(() => this.#inflight.delete(t))
  }

  #ack(command: string, id: CommandId, error?: string): Promise<void> {
    return this.emit({ type: 'response', command, id, success: !error, error: error ?? '' })
  }

  async #onFrame(frame: Frame, max: number): Promise<void> {
    if (frame.kind === 'too_long') return this.#ack('parse', null, `line of ${frame.bytes} bytes exceeds the ${max}-byte limit`)
    if (frame.kind === 'invalid_utf8') return this.#ack('parse', null, 'line is not valid UTF-8')
    let value: unknown
    try {
      value = JSON.parse(frame.text)
    } catch (e) {
      this.#opts.onWire?.('in', frame.text)
      return this.#ack('parse', null, `invalid JSON: ${(e as Error).message}`)
    }
    this.#opts.onWire?.('in', value)
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return this.#ack('parse', null, 'a command must be a JSON object')
    }
    const raw = value as Record<string, unknown>
    const id: CommandId = typeof raw.id === 'string' || (typeof raw.id === 'number' && Number.isFinite(raw.id)) ? raw.id : null
    if (typeof raw.type !== 'string') return this.#ack('parse', id, 'a command needs a string "type"')
    const type = raw.type
    if (!Object.hasOwn(rpcCommands, type)) return this.#ack(type, id, `unknown command type "${type}"`)
    const parsed = rpcCommands[type as RpcCommandType].schema.safeParse(raw)
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(command)'}: ${i.message}`).join('; ')
      return this.#ack(type, id, `invalid ${type} command: ${why}`)
    }
    const handler = this.#handlers[type as RpcCommandType] as ((c: unknown, ctx: RpcContext) => unknown) | undefined
    if (!handler) return this.#ack(type, id, `command "${type}" is not available in this build`)
    try {
      await handler(parsed.data, { emit: (m) => this.emit(m), logger: this.#opts.logger })
      return this.#ack(type, id)
    } catch (err) {
      if (!(err instanceof RpcCommandError)) this.#opts.logger.error(`command ${type} failed`, err)
      return this.#ack(type, id, err instanceof Error ? err.message : String(err))
    }
  }
}
