/**
 * A typed client for the JSON-lines RPC of `chimera code --mode rpc` (specs/asyncapi/rpc.asyncapi.yaml)
 * over a child process. Commands are validated with the generated command table before they are
 * written and get ids the client allocates; replies (a `state`, then the `response`) are matched
 * by id; everything else is an event, fanned out to each `events()` iterator and `on()` listener.
 * A `prompt` resolves when its turn ends (the spec acknowledges it then); aborting its signal
 * sends `cancel`.
 *
 * @example
 * const rpc = spawnRpcClient({ command: ['chimera', 'code', '--mode', 'rpc'], cwd })
 * rpc.on('message', (m) => m.done || process.stdout.write(m.content))
 * await rpc.prompt('!say hello')
 * await rpc.close()
 */
import { spawn, type ChildProcess } from 'node:child_process'
import {
  rpcCommands,
  type CompactionEvent,
  type ErrorEvent,
  type MessageEvent,
  type NoticeEvent,
  type PermissionRequestEvent,
  type ReasoningEvent,
  type RpcCommandType,
  type RpcResponse,
  type StateResponse,
  type ToolExecutionEvent,
} from '../../generated/rpc/jsonl.gen.ts'
import type { PermissionDecision } from '../../generated/schemas.gen.ts'
import type { z } from 'zod'
import { ChimeraClientError } from '../errors.ts'
import { formatIssues } from '../wire/issues.ts'
import { readFrames } from '../wire/line-stream.ts'

/** A command as written (without the id the client allocates). */
export type RpcCommand = {
  [T in RpcCommandType]: Omit<z.input<(typeof rpcCommands)[T]['schema']>, 'id'>
}[RpcCommandType]
/** Every event `chimera code --mode rpc` writes, discriminated on `type`. */
export type RpcEvent =
  | MessageEvent
  | ToolExecutionEvent
  | ErrorEvent
  | PermissionRequestEvent
  | CompactionEvent
  | ReasoningEvent
  | NoticeEvent
export type RpcEventType = RpcEvent['type']
export type { RpcResponse, StateResponse }

export interface RpcClientOptions {
  /** Program and arguments. Default `['chimera', 'code', '--mode', 'rpc']` (from PATH). */
  command?: string[]
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** What happens to the child's stderr (logs): kept as a tail (`pipe`, default), passed through, or dropped. */
  stderr?: 'pipe' | 'inherit' | 'ignore'
  /** Sees every message written (`in`) and read (`out`), e.g. for a wire log or a validator. */
  onWire?: (dir: 'in' | 'out', message: unknown) => void
}

export interface RpcCallOptions {
  signal?: AbortSignal
}

interface Pending {
  command: string
  resolve: (r: { response: RpcResponse; state?: StateResponse }) => void
  reject: (e: unknown) => void
  state?: StateResponse
}

const STDERR_TAIL = 16 * 1024
/** The longest stdout line read: generous, a `state` reply carries the whole history. */
const MAX_LINE_BYTES = 64 * 1024 * 1024

export class RpcClient {
  readonly process: ChildProcess
  /** The child's exit code (null when killed by a signal), once it exits. */
  readonly exited: Promise<number | null>
  readonly #pending = new Map<string, Pending>()
  readonly #subscribers = new Set<(ev: RpcEvent | Error | null) => void>()
  #nextId = 1
  #closed: Error | undefined
  #stderr = ''
  readonly #onWire: RpcClientOptions['onWire']

  constructor(opts: RpcClientOptions = {}) {
    this.#onWire = opts.onWire
    const [program, ...args] = opts.command ?? ['chimera', 'code', '--mode', 'rpc']
    if (!program) throw new TypeError('command must name a program')
    const child = spawn(program, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', opts.stderr ?? 'pipe'] })
    this.process = child
    child.stderr?.on('data', (d: Buffer) => {
      this.#stderr = (this.#stderr + d.toString('utf8')).slice(-STDERR_TAIL)
    })
    // A write to a child that already exited fails with EPIPE; the exit handler reports it.
    child.stdin!.on('error', () => {})
    // The same framer as the server reads commands with (client/wire/framer.ts).
    void readFrames(child.stdout!, MAX_LINE_BYTES, (f) =>
      f.kind === 'line'
        ? this.#onLine(f.text)
        : this.#emit(
            new ChimeraClientError(
              'protocol',
              f.kind === 'too_long' ? `stdout line of ${f.bytes} bytes is too long` : 'stdout line is not valid UTF-8',
            ),
          ),
    ).catch(() => {}) // a destroyed stdout ends like EOF; the exit handler reports it
    this.exited = new Promise((resolve) => {
      child.on('error', (err) => {
        this.#close(new ChimeraClientError('closed', `cannot run ${program}: ${err.message}`, { cause: err }))
        resolve(null)
      })
      child.on('close', (code) => {
        this.#close(
          new ChimeraClientError(
            'closed',
            `${program} exited (${code ?? 'signal'})${this.#stderr ? `: ${this.#stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`,
          ),
        )
        resolve(code)
      })
    })
  }

  /** The last 16 KiB the child wrote to stderr (with `stderr: 'pipe'`). */
  get stderrTail(): string {
    return this.#stderr
  }

  /** Sends one command and resolves with its response (and `state`, for get_state). A failed command rejects with ChimeraClientError('command_failed'). */
  async send(command: RpcCommand, o: RpcCallOptions = {}): Promise<{ response: RpcResponse; state?: StateResponse }> {
    if (this.#closed) throw this.#closed
    o.signal?.throwIfAborted()
    const id = `c${this.#nextId++}`
    const message = { ...command, id }
    const spec = (rpcCommands as Record<string, { schema: z.ZodType }>)[command.type]
    const check = spec?.schema.safeParse(message)
    if (!spec || !check?.success)
      throw new TypeError(
        `invalid ${command.type} command: ${check?.error ? formatIssues(check.error) : 'unknown type'}`,
      )
    const reply = new Promise<{ response: RpcResponse; state?: StateResponse }>((resolve, reject) =>
      this.#pending.set(id, { command: command.type, resolve, reject }),
    )
    this.#onWire?.('in', message)
    this.process.stdin!.write(`${JSON.stringify(message)}\n`)
    if (!o.signal) return reply
    const onAbort = (): void => {
      if (command.type === 'prompt') void this.send({ type: 'cancel' }).catch(() => {})
      else this.#pending.get(id)?.reject(o.signal!.reason)
    }
    o.signal.addEventListener('abort', onAbort, { once: true })
    return reply.finally(() => o.signal!.removeEventListener('abort', onAbort))
  }

  /** Runs a turn; resolves when it ends. Aborting `signal` cancels the turn. */
  async prompt(message: string, o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'prompt', message }, o)).response
  }
  /** Steers the running turn (fails when none runs). */
  async steer(message: string, o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'steer', message }, o)).response
  }
  async cancel(o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'cancel' }, o)).response
  }
  async getState(o?: RpcCallOptions): Promise<StateResponse> {
    const { state } = await this.send({ type: 'get_state' }, o)
    if (!state) throw new ChimeraClientError('protocol', 'get_state was acknowledged without a state reply')
    return state
  }
  async compact(o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'compact' }, o)).response
  }
  async setModel(model: string, o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'set_model', model }, o)).response
  }
  /** Answers a `permission_request` event (`--approval ask`). */
  async permissionReply(requestId: string, decision: PermissionDecision, o?: RpcCallOptions): Promise<RpcResponse> {
    return (await this.send({ type: 'permission_reply', request_id: requestId, decision }, o)).response
  }

  /** Calls `listener` for each event of `type`; returns the unsubscribe function. */
  on<T extends RpcEventType>(type: T, listener: (ev: Extract<RpcEvent, { type: T }>) => void): () => void {
    const sub = (ev: RpcEvent | Error | null): void => {
      if (ev && !(ev instanceof Error) && ev.type === type) listener(ev as Extract<RpcEvent, { type: T }>)
    }
    this.#subscribers.add(sub)
    return () => this.#subscribers.delete(sub)
  }

  /** Events from now on, until the child exits (or `signal` aborts). */
  async *events(o: RpcCallOptions = {}): AsyncGenerator<RpcEvent, void, undefined> {
    const queue: (RpcEvent | Error | null)[] = []
    let wake: (() => void) | undefined
    const sub = (ev: RpcEvent | Error | null): void => {
      queue.push(ev)
      wake?.()
    }
    const onAbort = (): void => sub(null)
    this.#subscribers.add(sub)
    o.signal?.addEventListener('abort', onAbort, { once: true })
    if (this.#closed || o.signal?.aborted) queue.push(null)
    try {
      for (;;) {
        while (queue.length === 0) await new Promise<void>((r) => (wake = r))
        const ev = queue.shift()!
        if (ev === null) return
        if (ev instanceof Error) throw ev
        yield ev
      }
    } finally {
      this.#subscribers.delete(sub)
      o.signal?.removeEventListener('abort', onAbort)
    }
  }

  /** Closes stdin (the process finishes its turns and exits) and resolves with the exit code. */
  async close(): Promise<number | null> {
    this.process.stdin!.end()
    return this.exited
  }

  /** Kills the child (SIGTERM) and waits for it. */
  async kill(): Promise<number | null> {
    this.process.kill('SIGTERM')
    return this.exited
  }

  #onLine(line: string): void {
    let m: Record<string, unknown>
    try {
      m = JSON.parse(line) as Record<string, unknown>
    } catch {
      return this.#emit(new ChimeraClientError('protocol', `stdout line is not JSON: ${line.slice(0, 200)}`))
    }
    this.#onWire?.('out', m)
    const id = typeof m.id === 'string' || typeof m.id === 'number' ? String(m.id) : undefined
    const pending = id !== undefined ? this.#pending.get(id) : undefined
    if (pending && (m.type === 'state' || (m.type === undefined && 'messages' in m))) {
      pending.state = m as unknown as StateResponse
      return
    }
    if (pending && (m.type === 'response' || (m.type === undefined && 'command' in m))) {
      this.#pending.delete(id!)
      const response = m as unknown as RpcResponse
      if (response.success) pending.resolve({ response, state: pending.state })
      else pending.reject(new ChimeraClientError('command_failed', `${pending.command} failed: ${response.error}`))
      return
    }
    if (m.type === 'response' || m.type === 'state') return // a reply to a command whose caller gave up
    this.#emit(m as unknown as RpcEvent)
  }

  #emit(ev: RpcEvent | Error | null): void {
    for (const sub of this.#subscribers) sub(ev)
  }

  #close(err: Error): void {
    if (this.#closed) return
    this.#closed = err
    for (const p of this.#pending.values()) p.reject(err)
    this.#pending.clear()
    this.#emit(null)
  }
}

/** Starts `chimera code --mode rpc` (or `command`) and returns its client. */
export function spawnRpcClient(opts: RpcClientOptions = {}): RpcClient {
  return new RpcClient(opts)
}
