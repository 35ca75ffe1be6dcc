/**
 * JSON-lines RPC (`chimera code --mode rpc`, docs/rpc.md): reads one command per line, validates
 * it with the generated command table, dispatches it to the registered handler and always
 * acknowledges it with an RpcResponse. Bad input of any kind gets a failure response and the
 * reader keeps going. Mirrors the document's `RpcServer` / `RpcHandler` split: the server owns
 * framing, validation and acknowledgement, the handlers own what commands do.
 *
 * Ordering: a command's work starts as soon as it is read (so `cancel` and `steer` reach a
 * running turn), but replies — a handler's `reply` messages, then the acknowledgement — are
 * written in the order the commands were received. Events (`emit`) are written as they come.
 */
import type { Readable, Writable } from 'node:stream'
import {
  rpcCommands,
  RPC_MAX_LINE_BYTES,
  type RpcCommandType,
  type RpcOutboundMessage,
} from '../../generated/rpc/jsonl.gen.ts'
import type { z } from 'zod'
import { readFrames, LineWriter } from '../../client/wire/line-stream.ts'
import type { Frame } from '../../client/wire/framer.ts'
import type { Logger } from '../log.ts'
import { formatIssues } from '../../client/wire/issues.ts'
import { rpcFailure } from './errors.ts'

export { RpcCommandError } from './errors.ts'

export type Command<T extends RpcCommandType> = z.output<(typeof rpcCommands)[T]['schema']>
type CommandId = string | number | null

/** What a handler may do besides returning: reply (in command order) and log. */
export interface RpcContext {
  /**
   * A reply to this command, written before its acknowledgement, in command order. A function
   * is called when the reply is written (after every earlier command's replies): `get_state`
   * reports the state as the client will see it next to its acknowledgement.
   */
  reply(message: RpcOutboundMessage | (() => RpcOutboundMessage)): void
  logger: Logger
}

/** A handler throws to fail its command; the error message becomes the response's `error` (errors.ts). */
export type RpcHandlers = { [T in RpcCommandType]?: (command: Command<T>, ctx: RpcContext) => unknown }

export interface RpcServerOptions {
  input: Readable
  output: Writable
  logger: Logger
  maxLineBytes?: number
  onWire?: (dir: 'in' | 'out', message: unknown) => void
  /** Stop reading when aborted (shutdown): commands already read still get their replies. */
  signal?: AbortSignal
}

export class RpcServer {
  readonly #opts: RpcServerOptions
  readonly #writer: LineWriter
  #handlers: RpcHandlers = {}
  /** Replies are written in command order: each command's replies wait for the previous ones. */
  #replies: Promise<void> = Promise.resolve()

  constructor(opts: RpcServerOptions) {
    this.#opts = opts
    this.#writer = new LineWriter(opts.output)
  }

  setHandlers(handlers: RpcHandlers): void {
    this.#handlers = handlers
  }

  /** Write one outbound event at once (not a reply). Resolves when the output took it. */
  emit(message: RpcOutboundMessage): Promise<void> {
    this.#opts.onWire?.('out', message)
    return this.#writer.write(message)
  }

  /** True once the output closed (nobody reads the events any more). */
  get outputClosed(): boolean {
    return this.#writer.closed
  }

  /**
   * Read commands until stdin closes (or `signal` aborts), then wait for commands still running
   * (a `prompt` is acknowledged when its turn ends) and resolve once every reply is written.
   */
  async run(opts: { onEnd?: () => void } = {}): Promise<void> {
    const max = this.#opts.maxLineBytes ?? RPC_MAX_LINE_BYTES
    const input = this.#opts.input
    const stop = (): void => void input.destroy()
    this.#opts.signal?.addEventListener('abort', stop, { once: true })
    try {
      // Backpressure: the next command is read only once the output takes more (LineWriter.ready).
      await readFrames(input, max, async (f) => {
        await this.#writer.ready()
        this.#onFrame(f, max)
      })
    } catch (err) {
      // A destroyed stdin (shutdown) ends reading like EOF.
      if (!this.#opts.signal?.aborted) this.#opts.logger.warn('rpc input failed', err)
    } finally {
      this.#opts.signal?.removeEventListener('abort', stop)
    }
    opts.onEnd?.()
    await this.#replies
    await this.#writer.flush()
  }

  /** Queue this command's replies behind the previous command's; `work` runs now. */
  #inOrder(command: string, id: CommandId, work: (ctx: RpcContext) => Promise<string | undefined>): void {
    const replies: (RpcOutboundMessage | (() => RpcOutboundMessage))[] = []
    const ctx: RpcContext = { reply: (m) => void replies.push(m), logger: this.#opts.logger }
    const result = work(ctx).catch((err: unknown) => {
      this.#opts.logger.error(`rpc command ${command} failed`, err)
      return err instanceof Error ? err.message : String(err)
    })
    this.#replies = this.#replies.then(async () => {
      const error = await result
      for (const m of replies) await this.emit(typeof m === 'function' ? m() : m)
      await this.emit({ type: 'response', command, id, success: error === undefined, error: error ?? '' })
    })
  }

  #onFrame(frame: Frame, max: number): void {
    const fail = (command: string, id: CommandId, error: string) => this.#inOrder(command, id, async () => error)
    if (frame.kind === 'too_long')
      return fail('parse', null, `line of ${frame.bytes} bytes exceeds the ${max}-byte limit`)
    if (frame.kind === 'invalid_utf8') return fail('parse', null, 'line is not valid UTF-8')
    let value: unknown
    try {
      value = JSON.parse(frame.text)
    } catch (e) {
      this.#opts.onWire?.('in', frame.text)
      return fail('parse', null, `invalid JSON: ${(e as Error).message}`)
    }
    this.#opts.onWire?.('in', value)
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return fail('parse', null, 'a command must be a JSON object')
    const raw = value as Record<string, unknown>
    const id: CommandId =
      typeof raw.id === 'string' || (typeof raw.id === 'number' && Number.isFinite(raw.id)) ? raw.id : null
    if (typeof raw.type !== 'string') return fail('parse', id, 'a command needs a string "type"')
    const type = raw.type
    if (!Object.hasOwn(rpcCommands, type)) return fail(type, id, `unknown command type "${type}"`)
    const parsed = rpcCommands[type as RpcCommandType].schema.safeParse(raw)
    if (!parsed.success) return fail(type, id, `invalid ${type} command: ${formatIssues(parsed.error)}`)
    const handler = Object.hasOwn(this.#handlers, type)
      ? (this.#handlers[type as RpcCommandType] as (c: unknown, ctx: RpcContext) => unknown)
      : undefined
    if (!handler) return fail(type, id, `command "${type}" is not available in this build`)
    this.#inOrder(type, id, async (ctx) => {
      try {
        await handler(parsed.data, ctx)
        return undefined
      } catch (err) {
        const failure = rpcFailure(err)
        if (failure.agent) this.#opts.logger.error(`command ${type} failed`, err)
        return failure.error
      }
    })
  }
}
