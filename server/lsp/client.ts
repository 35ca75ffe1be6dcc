/**
 * One language server process and the JSON-RPC connection to it (vscode-languageserver-protocol:
 * framing, ids, cancellation). Starts the process in its own process group (tracked, so a
 * shutdown of this process kills it), runs `initialize` with our pid (servers exit by themselves
 * when we die without a goodbye), keeps opened documents in sync with the disk (didOpen, then a
 * full-text didChange when the file changed), collects published diagnostics, and bounds every
 * request with a timeout. Any failure is an `LspError` with the tool's message; a process that
 * exits fails every pending request at once and marks the client dead (the manager restarts it).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { extname } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { pathToFileURL } from 'node:url'
import {
  CancellationTokenSource,
  createProtocolConnection,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
} from 'vscode-languageserver-protocol/node.js'
import type { Diagnostic, ServerCapabilities } from 'vscode-languageserver-protocol'
import type { Logger } from '../log.ts'
import { noopLogger } from '../log.ts'
import { groupAlive, killTree, signalGroup, supervise } from '../platform/supervisor.ts'
import { toolProcessEnv } from '../platform/process-env.ts'
import { LspError, serverFailed, timedOut } from './errors.ts'
import { quietWriter } from './quiet-writer.ts'
import type { LspCommand, LspServerSpec } from './servers.ts'

/** Files larger than this are not sent to a server. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
/** After the last publish for a document, how long to wait for another before answering. */
export const PUBLISH_QUIET_MS = 300
/**
 * How long to wait for a new publish after a change when the server has published for the
 * document before: some servers (typescript-language-server) publish nothing when the
 * diagnostics did not change, so silence then means "as before".
 */
export const PUBLISH_SETTLE_MS = 2000
const STDERR_TAIL = 2000
/** How long a server whose input broke gets to exit on its own before it is ended. */
const WRITE_FAILURE_GRACE_MS = 1000

export interface LspClientOptions {
  spec: LspServerSpec
  command: LspCommand
  /** The project root (absolute, real). */
  root: string
  logger?: Logger
  requestTimeoutMs: number
  startTimeoutMs: number
  /** Called when a request has been written to the server (tests kill servers mid-request here). */
  onRequest?: (method: string, pid: number) => void
}

interface OpenDoc {
  version: number
  text: string
}

interface Published {
  seq: number
  version: number | undefined
  items: Diagnostic[]
}

export class LspClient {
  readonly spec: LspServerSpec
  readonly root: string
  readonly #opts: LspClientOptions
  readonly #log: Logger
  #proc: ChildProcessByStdio<Writable, Readable, Readable> | undefined
  #conn: ProtocolConnection | undefined
  #untrack: (() => void) | undefined
  #dead: string | undefined
  #deathWaiters = new Set<(reason: string) => void>()
  #stderr = ''
  #started: Promise<void> | undefined
  capabilities: ServerCapabilities = {}
  readonly #docs = new Map<string, OpenDoc>()
  readonly #published = new Map<string, Published>()
  #publishSeq = 0
  readonly #publishWaiters = new Set<() => void>()

  constructor(opts: LspClientOptions) {
    this.spec = opts.spec
    this.root = opts.root
    this.#opts = opts
    this.#log = opts.logger ?? noopLogger
  }

  get pid(): number | undefined {
    return this.#proc?.pid
  }

  /** Why the server is gone, or undefined while it runs (or has not started). */
  get dead(): string | undefined {
    return this.#dead
  }

  /** Start the process and initialize (once; later calls share the first). */
  start(): Promise<void> {
    this.#started ??= this.#start()
    return this.#started
  }

  async #start(): Promise<void> {
    const { command, args, initializationOptions } = this.#opts.command
    const proc = spawn(command, args, {
      cwd: this.root,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
      env: toolProcessEnv({ home: process.env.HOME ?? homedir() }),
    })
    this.#proc = proc
    proc.on('error', (e) => this.#die(`${this.spec.id} could not start: ${e.message}`))
    if (proc.pid === undefined) {
      // The spawn failed (not found, not executable): its 'error' event says why, next tick.
      await new Promise<void>((r) => setImmediate(r))
      throw serverFailed(this.#dead ?? `${this.spec.id} could not start`)
    }
    proc.on('exit', (code, signal) => {
      // What it started in its group (tsserver, workers) must not outlive it.
      if (proc.pid !== undefined) signalGroup(proc.pid, 'SIGKILL')
      this.#die(`${this.spec.id} exited (${signal ? `killed by ${signal}` : `code ${code}`})${this.#stderrTail()}`)
    })
    proc.stdin.on('error', () => {})
    proc.stderr.setEncoding('utf8')
    proc.stderr.on('data', (d: string) => {
      this.#stderr = (this.#stderr + d).slice(-STDERR_TAIL)
    })
    if (proc.pid !== undefined) {
      const pid = proc.pid
      this.#untrack = supervise(pid, 'tool', () => killTree(pid))
    }
    const writer = quietWriter(new StreamMessageWriter(proc.stdin), (err) => this.#writeFailed(err))
    const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), writer)
    this.#conn = conn
    conn.onError(([e]) => this.#log.debug(`lsp ${this.spec.id}: connection error: ${e.message}`))
    conn.onRequest('workspace/configuration', (p: { items?: unknown[] }) =>
      Array.isArray(p?.items) ? p.items.map(() => null) : [],
    )
    conn.onRequest('workspace/workspaceFolders', () => [{ uri: pathToFileURL(this.root).href, name: this.root }])
    conn.onRequest('client/registerCapability', () => null)
    conn.onRequest('client/unregisterCapability', () => null)
    conn.onRequest('window/workDoneProgress/create', () => null)
    conn.onRequest('window/showMessageRequest', () => null)
    conn.onRequest('workspace/applyEdit', () => ({ applied: false, failureReason: 'edits are applied by the agent' }))
    conn.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.#published.set(p.uri, { seq: ++this.#publishSeq, version: p.version, items: p.diagnostics })
      for (const w of [...this.#publishWaiters]) w()
    })
    conn.listen()
    const rootUri = pathToFileURL(this.root).href
    const init = (await this.#send(
      InitializeRequest.method,
      {
        processId: process.pid,
        rootUri,
        rootPath: this.root,
        workspaceFolders: [{ uri: rootUri, name: this.root }],
        initializationOptions: initializationOptions ?? {},
        capabilities: {
          workspace: { configuration: true, workspaceFolders: true, workspaceEdit: { documentChanges: true } },
          textDocument: {
            synchronization: { didSave: false, dynamicRegistration: false },
            publishDiagnostics: { versionSupport: true, relatedInformation: false },
            diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
            completion: { completionItem: { snippetSupport: false, documentationFormat: ['plaintext'] } },
            definition: { linkSupport: true },
            references: {},
            rename: { prepareSupport: false },
          },
        },
      },
      undefined,
      this.#opts.startTimeoutMs,
    )) as { capabilities?: ServerCapabilities }
    this.capabilities = init?.capabilities ?? {}
    await conn.sendNotification(InitializedNotification.type, {})
  }

  #stderrTail(): string {
    const line = this.#stderr.trim().split('\n').filter(Boolean).slice(-3).join(' | ')
    return line ? `: ${line.slice(-500)}` : ''
  }

  /**
   * A write to the server failed: its input pipe is broken, so it is exiting (its exit says why,
   * and ends every waiting request) or it closed its input while running: then end it.
   */
  #writeFailed(err: Error): void {
    if (this.#dead) return
    this.#log.debug(`lsp ${this.spec.id}: write failed: ${err.message}`)
    setTimeout(() => {
      if (this.#dead) return
      const pid = this.#proc?.pid
      if (pid !== undefined) signalGroup(pid, 'SIGKILL')
      this.#die(`${this.spec.id} stopped reading its input (${err.message})`)
    }, WRITE_FAILURE_GRACE_MS).unref()
  }

  #die(reason: string): void {
    if (this.#dead) return
    this.#dead = reason
    this.#untrack?.()
    this.#conn?.dispose()
    for (const w of [...this.#deathWaiters]) w(reason)
    for (const w of [...this.#publishWaiters]) w()
    this.#log.warn(`lsp ${this.spec.id} (${this.root}): ${reason}`)
  }

  /** Send a request bounded by `timeoutMs` and `signal`; every failure is an LspError. */
  async #send(
    method: string,
    params: unknown,
    signal?: AbortSignal,
    timeoutMs = this.#opts.requestTimeoutMs,
  ): Promise<unknown> {
    if (this.#dead) throw serverFailed(this.#dead)
    const conn = this.#conn
    if (!conn) throw serverFailed(`${this.spec.id} is not running`)
    const cts = new CancellationTokenSource()
    let timer: NodeJS.Timeout | undefined
    let onDeath: ((reason: string) => void) | undefined
    let onAbort: (() => void) | undefined
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timedOut()), timeoutMs)
      onDeath = (reason) => reject(serverFailed(reason))
      this.#deathWaiters.add(onDeath)
      onAbort = () => reject(new LspError('LSP request cancelled'))
      signal?.addEventListener('abort', onAbort, { once: true })
      if (signal?.aborted) onAbort()
    })
    try {
      const request = conn.sendRequest(method, params, cts.token)
      this.#opts.onRequest?.(method, this.#proc?.pid ?? -1)
      return await Promise.race([request, guard])
    } catch (e) {
      if (e instanceof LspError) {
        cts.cancel()
        throw e
      }
      // A connection torn down by the process exit: report the exit, not the teardown.
      if (this.#dead) throw serverFailed(this.#dead)
      throw new LspError(`the language server answered ${method} with an error: ${(e as Error).message}`)
    } finally {
      clearTimeout(timer)
      if (onDeath) this.#deathWaiters.delete(onDeath)
      if (onAbort) signal?.removeEventListener('abort', onAbort)
      cts.dispose()
    }
  }

  /** A request after start-up (see {@link #send}). */
  async request(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    await this.start()
    return this.#send(method, params, signal)
  }

  /**
   * Bring the server's copy of `abs` (and of every document opened before) up to date with the
   * disk. Returns true when `abs` was opened or changed now (fresh diagnostics are coming).
   */
  async sync(abs: string): Promise<boolean> {
    await this.start()
    let changed = false
    try {
      for (const path of new Set([...this.#docs.keys(), abs])) {
        const now = await this.#syncOne(path)
        if (path === abs) changed = now
      }
    } catch (e) {
      if (e instanceof LspError) throw e
      // A notification written to a server that just died: report the death.
      throw serverFailed(this.#dead ?? (e as Error).message)
    }
    return changed
  }

  async #syncOne(abs: string): Promise<boolean> {
    const conn = this.#conn
    if (!conn || this.#dead) throw serverFailed(this.#dead ?? `${this.spec.id} is not running`)
    let text: string
    try {
      const buf = await readFile(abs)
      if (buf.length > MAX_DOCUMENT_BYTES) throw new LspError(`${abs} is larger than ${MAX_DOCUMENT_BYTES} bytes`)
      text = buf.toString('utf8')
    } catch (e) {
      if (e instanceof LspError) throw e
      // A document that disappeared stays as the server last saw it.
      if (this.#docs.has(abs)) return false
      throw new LspError(`cannot read ${abs}: ${(e as Error).message}`)
    }
    const uri = pathToFileURL(abs).href
    const doc = this.#docs.get(abs)
    if (!doc) {
      this.#docs.set(abs, { version: 1, text })
      await conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: this.spec.languageId(extname(abs).toLowerCase()), version: 1, text },
      })
      return true
    }
    if (doc.text === text) return false
    doc.version++
    doc.text = text
    await conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: doc.version },
      contentChanges: [{ text }],
    })
    return true
  }

  /** The version of an opened document. */
  version(abs: string): number | undefined {
    return this.#docs.get(abs)?.version
  }

  /**
   * Diagnostics of `abs` after {@link sync}: pulled (`textDocument/diagnostic`) when the server
   * offers it, else the ones it publishes for the current version (waiting for them when the
   * document just changed, then for a short quiet spell, since some servers publish in parts).
   */
  async diagnostics(abs: string, fresh: boolean, signal?: AbortSignal): Promise<Diagnostic[]> {
    const uri = pathToFileURL(abs).href
    if (this.capabilities.diagnosticProvider) {
      const r = (await this.#send('textDocument/diagnostic', { textDocument: { uri } }, signal)) as {
        kind?: string
        items?: Diagnostic[]
      } | null
      if (r?.kind === 'full' && Array.isArray(r.items)) return r.items
      return this.#published.get(uri)?.items ?? []
    }
    const known = this.#published.get(uri)
    if (!fresh && known) return known.items
    return this.#awaitPublished(uri, this.version(abs), known?.seq ?? 0, signal)
  }

  #awaitPublished(
    uri: string,
    version: number | undefined,
    afterSeq: number,
    signal?: AbortSignal,
  ): Promise<Diagnostic[]> {
    return new Promise<Diagnostic[]>((resolve, reject) => {
      let quiet: NodeJS.Timeout | undefined
      const finish = (f: () => void): void => {
        clearTimeout(deadline)
        clearTimeout(settle)
        clearTimeout(quiet)
        this.#publishWaiters.delete(check)
        signal?.removeEventListener('abort', onAbort)
        f()
      }
      const check = (): void => {
        if (this.#dead) return finish(() => reject(serverFailed(this.#dead as string)))
        const p = this.#published.get(uri)
        if (!p || p.seq <= afterSeq || (p.version !== undefined && version !== undefined && p.version < version)) return
        clearTimeout(quiet)
        quiet = setTimeout(() => finish(() => resolve(this.#published.get(uri)?.items ?? [])), PUBLISH_QUIET_MS)
      }
      const onAbort = (): void => finish(() => reject(new LspError('LSP request cancelled')))
      const deadline = setTimeout(() => finish(() => reject(timedOut())), this.#opts.requestTimeoutMs)
      const previous = afterSeq > 0
      const settle = previous
        ? setTimeout(
            () => {
              if (quiet === undefined) finish(() => resolve(this.#published.get(uri)?.items ?? []))
            },
            Math.min(PUBLISH_SETTLE_MS, this.#opts.requestTimeoutMs),
          )
        : undefined
      this.#publishWaiters.add(check)
      signal?.addEventListener('abort', onAbort, { once: true })
      check()
    })
  }

  /** Ask the server to shut down and exit; kill its process group if it has not within `graceMs`. */
  async shutdown(graceMs = 2000): Promise<void> {
    const proc = this.#proc
    if (!proc || this.#dead) return
    const exited = new Promise<void>((r) => {
      if (this.#dead) r()
      else this.#deathWaiters.add(() => r())
    })
    const conn = this.#conn
    try {
      if (conn) {
        await Promise.race([
          conn.sendRequest(ShutdownRequest.type),
          new Promise((r) => setTimeout(r, graceMs / 2).unref()),
        ])
        await conn.sendNotification(ExitNotification.type)
      }
    } catch {
      // Already going; the kill below makes sure.
    }
    let timer: NodeJS.Timeout | undefined
    await Promise.race([exited, new Promise<void>((r) => (timer = setTimeout(r, graceMs / 2)))])
    clearTimeout(timer)
    // Whatever the server left behind in its group (tsserver, workers) goes with it.
    if (proc.pid !== undefined) {
      if (proc.exitCode === null && proc.signalCode === null) killTree(proc.pid)
      else signalGroup(proc.pid, 'SIGKILL')
      // Shut down means gone: wait (bounded) until the kernel has removed the whole group.
      for (let i = 0; i < 100 && groupAlive(proc.pid); i++) await new Promise((r) => setTimeout(r, 10))
    }
    this.#die(`${this.spec.id} was shut down`)
  }
}
