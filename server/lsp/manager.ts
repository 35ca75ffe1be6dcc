/**
 * The LSP manager of one working directory: finds the language server for a file (by
 * extension, from the registry) and its project root (nearest root marker between the file and
 * the working directory; cached per directory), starts that server on first use — one process
 * per server and root — restarts it on the next call after it died, and shuts everything down.
 * The five operations return plain LSP results; every failure is an `LspError` carrying the
 * tool's message.
 */
import { existsSync, realpathSync } from 'node:fs'
import { basename, dirname, extname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type {
  CompletionItem,
  CompletionList,
  Diagnostic,
  Location,
  LocationLink,
  Position,
  WorkspaceEdit,
} from 'vscode-languageserver-protocol'
import type { Logger } from '../log.ts'
import { noopLogger } from '../log.ts'
import { isInside } from '../platform/path-inside.ts'
// The client (and the LSP protocol library under it) loads with the first server started, not with the process.
import type { LspClient } from './client.ts'
import { noServerFor, serverFailed } from './errors.ts'
import { defaultServers, type LspServers, type LspServerSpec } from './servers.ts'

export interface LspManagerOptions {
  /** The working directory (the workspace the tools are confined to). */
  cwd: string
  /** Where servers are looked up (default the process-wide registry). */
  servers?: LspServers
  logger?: Logger
  /** Bound on each request after start-up (default 30 s). */
  requestTimeoutMs?: number
  /** Bound on start-up and `initialize` (default 60 s). */
  startTimeoutMs?: number
  /** Test hook: a request was written to a server. */
  onRequest?: (method: string, pid: number) => void
}

/** A running (or dead) server of the manager, for status and tests. */
export interface LspServerState {
  id: string
  root: string
  pid: number | undefined
  dead: string | undefined
  /** The server offers pull diagnostics (`textDocument/diagnostic`); else they are published. */
  pullDiagnostics: boolean
}

export class LspManager {
  readonly cwd: string
  readonly #opts: LspManagerOptions
  readonly #servers: LspServers
  readonly #log: Logger
  readonly #roots = new Map<string, string>()
  readonly #clients = new Map<string, LspClient>()
  #closed = false

  constructor(opts: LspManagerOptions) {
    this.#opts = opts
    this.cwd = realOr(opts.cwd)
    this.#servers = opts.servers ?? defaultServers
    this.#log = opts.logger ?? noopLogger
  }

  /** The server and project root for `abs` (a real path), discovery cached per directory. */
  discover(abs: string): { spec: LspServerSpec; root: string } {
    const ext = extname(abs).toLowerCase()
    const spec = ext ? this.#servers.forExtension(ext) : undefined
    if (!spec) throw noServerFor(ext || basename(abs))
    const dir = dirname(abs)
    const key = `${spec.id}\0${dir}`
    let root = this.#roots.get(key)
    if (root === undefined) {
      root = findRoot(dir, this.cwd, spec.rootMarkers)
      this.#roots.set(key, root)
    }
    return { spec, root }
  }

  /** The live client for `abs`, started (or restarted after a crash) now if needed. */
  async #client(abs: string): Promise<LspClient> {
    // Loaded before the lookup below, which stays synchronous (two calls cannot both start a server).
    const { LspClient } = await import('./client.ts')
    if (this.#closed) throw serverFailed('the session has ended')
    const { spec, root } = this.discover(abs)
    const key = `${spec.id}\0${root}`
    let client = this.#clients.get(key)
    if (client?.dead) {
      this.#log.info(`lsp ${spec.id} (${root}): restarting after: ${client.dead}`)
      client = undefined
    }
    if (!client) {
      const command = spec.resolve()
      if ('missing' in command) throw serverFailed(command.missing)
      client = new LspClient({
        spec,
        command,
        root,
        logger: this.#log,
        requestTimeoutMs: this.#opts.requestTimeoutMs ?? 30_000,
        startTimeoutMs: this.#opts.startTimeoutMs ?? 60_000,
        ...(this.#opts.onRequest ? { onRequest: this.#opts.onRequest } : {}),
      })
      this.#clients.set(key, client)
    }
    try {
      await client.start()
    } catch (e) {
      // A start that failed leaves a dead (or hung) client: the next call starts afresh.
      this.#clients.delete(key)
      void client.shutdown(200)
      throw e
    }
    return client
  }

  async diagnostics(abs: string, signal?: AbortSignal): Promise<Diagnostic[]> {
    const client = await this.#client(abs)
    const fresh = await client.sync(abs)
    return client.diagnostics(abs, fresh, signal)
  }

  async completion(abs: string, position: Position, signal?: AbortSignal): Promise<CompletionItem[]> {
    const r = (await this.#positional(abs, 'textDocument/completion', position, {}, signal)) as
      CompletionItem[] | CompletionList | null
    if (!r) return []
    return Array.isArray(r) ? r : (r.items ?? [])
  }

  async definition(abs: string, position: Position, signal?: AbortSignal): Promise<Location[]> {
    return toLocations(await this.#positional(abs, 'textDocument/definition', position, {}, signal))
  }

  async references(
    abs: string,
    position: Position,
    includeDeclaration: boolean,
    signal?: AbortSignal,
  ): Promise<Location[]> {
    return toLocations(
      await this.#positional(abs, 'textDocument/references', position, { context: { includeDeclaration } }, signal),
    )
  }

  async rename(abs: string, position: Position, newName: string, signal?: AbortSignal): Promise<WorkspaceEdit | null> {
    return (await this.#positional(abs, 'textDocument/rename', position, { newName }, signal)) as WorkspaceEdit | null
  }

  /** Tell the server about files changed outside it (after a rename was applied). */
  async resync(abs: string): Promise<void> {
    const client = await this.#client(abs)
    await client.sync(abs)
  }

  async #positional(
    abs: string,
    method: string,
    position: Position,
    extra: object,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const client = await this.#client(abs)
    await client.sync(abs)
    return client.request(method, { textDocument: { uri: pathToFileURL(abs).href }, position, ...extra }, signal)
  }

  /** The servers started so far. */
  servers(): LspServerState[] {
    return [...this.#clients.values()].map((c) => ({
      id: c.spec.id,
      root: c.root,
      pid: c.pid,
      dead: c.dead,
      pullDiagnostics: Boolean(c.capabilities.diagnosticProvider),
    }))
  }

  /** Shut every server down (politely, then by force); the manager starts no more. */
  async shutdown(): Promise<void> {
    this.#closed = true
    const all = [...this.#clients.values()]
    this.#clients.clear()
    await Promise.all(all.map((c) => c.shutdown()))
  }
}

/** Nearest directory from `dir` up to `top` holding one of `markers`; `top` when none does. */
export function findRoot(dir: string, top: string, markers: readonly string[]): string {
  if (!isInside(top, dir)) return dir
  for (let d = dir; ; d = dirname(d)) {
    if (markers.some((m) => existsSync(join(d, m)))) return d
    if (d === top || dirname(d) === d) return top
  }
}

function toLocations(r: unknown): Location[] {
  if (!r) return []
  const list = (Array.isArray(r) ? r : [r]) as (Location | LocationLink)[]
  return list.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange ?? l.targetRange } : l))
}

function realOr(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}
