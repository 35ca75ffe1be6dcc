/**
 * The ACP client side (Node):
 * - `spawnAgent()` starts `chimera ferret serve` (or any ACP agent command) and connects the
 *   official SDK's client app to its stdio — register your handlers (`session/request_permission`,
 *   `session/update` through `buildSession`…) on the app you pass;
 * - `chimeraExtensions(agent)` gives typed calls for our `_`-prefixed v1 extensions
 *   (specs/openrpc/acp-v1.extensions.yaml), params and results typed and checked with the
 *   generated validators;
 * - `SeedAcpClient` / `spawnSeedAgent()` speak the seed dialect (specs/openrpc/acp-seed.openrpc.yaml),
 *   every method typed from the generated method table: `call`, `notify`, `on` for the agent's
 *   notifications, `handle` for its requests.
 * Newline-delimited JSON-RPC on both (the seed client over the same framer and JSON-RPC connection
 * as the server); stderr is kept (the last 4 KiB) for error messages.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import { client as acpClient, ndJsonStream, type ClientApp, type ClientContext } from '@agentclientprotocol/sdk'
import type { z } from 'zod'
import { acpSeedMethods } from '../../generated/acp/seed.gen.ts'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { ChimeraClientError } from '../errors.ts'
import { formatIssues } from '../wire/issues.ts'
import { Connection } from '../wire/jsonrpc/connection.ts'
import { CODES, RpcError } from '../wire/jsonrpc/errors.ts'

export interface SpawnOptions {
  /** Program and arguments. Default `['chimera', 'ferret', 'serve']`. */
  command?: string[]
  cwd?: string
  env?: NodeJS.ProcessEnv
}

function start(o: SpawnOptions): { child: ChildProcess; stderr: () => string } {
  const [program, ...args] = o.command ?? ['chimera', 'ferret', 'serve']
  const child = spawn(program!, args, { cwd: o.cwd, env: o.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] })
  let tail = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    tail = (tail + d).slice(-4096)
  })
  return { child, stderr: () => tail }
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  child.stdin?.end()
  const timer = setTimeout(() => child.kill('SIGTERM'), 5000)
  const code = await exited
  clearTimeout(timer)
  return code
}

// ------------------------------------------------------------------ v1 with the official SDK

type V1 = typeof acpV1Methods
type V1Request = {
  [M in keyof V1]: V1[M]['kind'] extends 'request' ? (V1[M]['direction'] extends 'client-to-agent' ? M : never) : never
}[keyof V1]
type ExtRequest = Extract<V1Request, `_${string}`>
export type ExtParams<M extends ExtRequest> = z.input<V1[M]['params']>
export type ExtResult<M extends ExtRequest> = V1[M]['result'] extends z.ZodType ? z.output<V1[M]['result']> : never

/** Calls one of our `_` extension methods: params checked before sending, the result after. */
export async function callExtension<M extends ExtRequest>(
  agent: ClientContext,
  method: M,
  params: ExtParams<M>,
): Promise<ExtResult<M>> {
  const spec = acpV1Methods[method]
  const checked = spec.params.safeParse(params)
  if (!checked.success) throw new TypeError(`${method}: ${formatIssues(checked.error)}`)
  const result = await agent.request<unknown>(method, params)
  const parsed = (spec.result as z.ZodType).safeParse(result)
  if (!parsed.success)
    throw new ChimeraClientError(
      'protocol',
      `${method} answered a result outside the spec: ${formatIssues(parsed.error)}`,
    )
  return parsed.data as ExtResult<M>
}

/** Typed helpers for the extensions (each takes the method's params, resolves to its result). */
export function chimeraExtensions(agent: ClientContext) {
  return {
    /** `_session/steering`: inject a prompt into the running turn. */
    steer: (p: ExtParams<'_session/steering'>) => callExtension(agent, '_session/steering', p),
    /** `_chimera/session/replay`: the retained `session/update`s after `sinceEventId`, written before the answer. */
    replay: (p: ExtParams<'_chimera/session/replay'>) => callExtension(agent, '_chimera/session/replay', p),
    /** `_chimera/session/state`: model, mode, status, message history and last event id. */
    state: (p: ExtParams<'_chimera/session/state'>) => callExtension(agent, '_chimera/session/state', p),
    /** `_chimera/session/compact`: summarise the history now. */
    compact: (p: ExtParams<'_chimera/session/compact'>) => callExtension(agent, '_chimera/session/compact', p),
    /** `_ferret/session/setSandbox`. */
    setSandbox: (p: ExtParams<'_ferret/session/setSandbox'>) => callExtension(agent, '_ferret/session/setSandbox', p),
    /** `_ferret/session/setApproval`. */
    setApproval: (p: ExtParams<'_ferret/session/setApproval'>) =>
      callExtension(agent, '_ferret/session/setApproval', p),
    /** `_ferret/session/bridgeStatus`. */
    bridgeStatus: (p: ExtParams<'_ferret/session/bridgeStatus'>) =>
      callExtension(agent, '_ferret/session/bridgeStatus', p),
  }
}
export type ChimeraExtensions = ReturnType<typeof chimeraExtensions>

export interface SpawnAgentOptions extends SpawnOptions {
  /** The client app with your handlers; default: an app with none. */
  app?: ClientApp
}

export interface AgentConnection {
  child: ChildProcess
  /** Calls agent methods (`agent.request('initialize', …)`, `agent.buildSession(cwd)`…). */
  agent: ClientContext
  ext: ChimeraExtensions
  /** The agent's recent stderr. */
  readonly stderrTail: string
  /** Closes stdin and waits for the agent to exit (SIGTERM after 5 s); resolves to its exit code. */
  close(): Promise<number | null>
}

/** Starts an ACP agent (default `chimera ferret serve`) and connects the SDK's client app to it. */
export function spawnAgent(o: SpawnAgentOptions = {}): AgentConnection {
  const { child, stderr } = start(o)
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  )
  const connection = (o.app ?? acpClient({ name: 'chimera-client' })).connect(stream)
  const agent = connection.agent as ClientContext
  return {
    child,
    agent,
    ext: chimeraExtensions(agent),
    get stderrTail() {
      return stderr()
    },
    close: async () => {
      const code = await stop(child)
      connection.close()
      return code
    },
  }
}

// ------------------------------------------------------------------ the seed dialect

type Seed = typeof acpSeedMethods
type SeedOf<K extends string, D extends string> = {
  [M in keyof Seed]: Seed[M]['kind'] extends K ? (Seed[M]['direction'] extends D | 'both' ? M : never) : never
}[keyof Seed]
export type SeedRequest = SeedOf<'request', 'client-to-agent'>
export type SeedNotification = SeedOf<'notification', 'client-to-agent'>
export type SeedAgentNotification = SeedOf<'notification', 'agent-to-client'>
export type SeedAgentRequest = SeedOf<'request', 'agent-to-client'>
export type SeedParams<M extends keyof Seed> = z.input<Seed[M]['params']>
export type SeedResult<M extends keyof Seed> = Seed[M]['result'] extends z.ZodType ? z.output<Seed[M]['result']> : void

/** A JSON-RPC error answer from the agent. */
export class AcpRemoteError extends Error {
  override readonly name = 'AcpRemoteError'
  readonly code: number
  readonly data: unknown
  constructor(method: string, e: { code: number; message: string; data?: unknown }) {
    super(`${method} → ${e.code} ${e.message}`)
    this.code = e.code
    this.data = e.data
  }
}

/** The longest line read from the agent: generous, an answer (a replayed history) can be large. */
const MAX_LINE_BYTES = 64 * 1024 * 1024

/** The seed dialect over the shared JSON-RPC connection (client/wire/jsonrpc/connection.ts). */
export class SeedAcpClient {
  readonly child: ChildProcess
  readonly #stderr: () => string
  readonly #conn: Connection
  readonly #listeners = new Map<string, Set<(params: unknown) => void>>()
  readonly #handlers = new Map<string, (params: unknown) => unknown>()
  #closed: Error | undefined

  constructor(o: SpawnOptions = {}) {
    const { child, stderr } = start(o)
    this.child = child
    this.#stderr = stderr
    const fail = (err: Error): void => {
      this.#closed ??= err
    }
    child.on('exit', (code) =>
      fail(
        new ChimeraClientError(
          'closed',
          `the agent exited with ${code}${stderr() ? `: ${stderr().trim().split('\n').at(-1)}` : ''}`,
        ),
      ),
    )
    child.stdin!.on('error', (err) =>
      fail(new ChimeraClientError('closed', `the agent's stdin closed: ${err.message}`)),
    )
    this.#conn = new Connection({
      input: child.stdout!,
      output: child.stdin!,
      maxLineBytes: MAX_LINE_BYTES,
      logger: { debug() {}, warn() {}, error() {} },
    })
    void this.#conn.serve({
      request: async (method, params) => {
        const handler = this.#handlers.get(method)
        if (!handler) throw new RpcError(CODES.methodNotFound, `the client does not handle ${method}`)
        return handler(params)
      },
      notification: async (method, params) => {
        for (const l of this.#listeners.get(method) ?? []) l(params)
      },
      internalError: (err) => ({
        code: CODES.internalError,
        message: err instanceof Error ? err.message : String(err),
      }),
    })
  }

  get stderrTail(): string {
    return this.#stderr()
  }

  /** Sends a request; resolves to its typed result, rejects with AcpRemoteError on an error answer. */
  async call<M extends SeedRequest>(method: M, params: SeedParams<M>): Promise<SeedResult<M>> {
    if (this.#closed) throw this.#closed
    let raw: unknown
    try {
      raw = await this.#conn.request(method, params)
    } catch (err) {
      if (RpcError.is(err)) throw new AcpRemoteError(method, err)
      throw this.#closed ?? new ChimeraClientError('closed', `the agent closed its output`, { cause: err })
    }
    const spec = acpSeedMethods[method] as Seed[keyof Seed]
    if (!spec.result) return undefined as SeedResult<M>
    const parsed = (spec.result as z.ZodType).safeParse(raw)
    if (!parsed.success)
      throw new ChimeraClientError(
        'protocol',
        `${method} answered a result outside the seed spec: ${formatIssues(parsed.error)}`,
      )
    return parsed.data as SeedResult<M>
  }

  notify<M extends SeedNotification>(method: M, params: SeedParams<M>): void {
    if (!this.#closed) void this.#conn.notify(method, params)
  }

  /** Listens to an agent notification (`session/update`…); returns the unsubscribe. */
  on<M extends SeedAgentNotification>(method: M, listener: (params: z.output<Seed[M]['params']>) => void): () => void {
    const set = this.#listeners.get(method) ?? new Set()
    this.#listeners.set(method, set)
    set.add(listener as (p: unknown) => void)
    return () => set.delete(listener as (p: unknown) => void)
  }

  /** Answers an agent request (a permission question…) with the handler's result. */
  handle<M extends SeedAgentRequest>(
    method: M,
    handler: (params: z.output<Seed[M]['params']>) => SeedResult<M> | Promise<SeedResult<M>>,
  ): void {
    this.#handlers.set(method, handler as (p: unknown) => unknown)
  }

  /** Closes stdin and waits for the agent to exit; resolves to its exit code. */
  close(): Promise<number | null> {
    return stop(this.child)
  }
}

/** Starts a seed-dialect ACP agent (default `chimera ferret serve`). */
export const spawnSeedAgent = (o: SpawnOptions = {}): SeedAcpClient => new SeedAcpClient(o)
