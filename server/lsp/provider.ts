/**
 * The provider seam of docs/lsp.md: the LSP tools ask a provider (a callable returning a manager,
 * or nothing) when they run, so nothing starts until an LSP tool is used and tests can swap in
 * stubs. A session holds one `LspProvider` over an `LspFactory` (one manager per working
 * directory, made on first use and shut down with the session).
 */
import type { Logger } from '../log.ts'
import { LspManager, type LspManagerOptions } from './manager.ts'

/** What the tools consult: the manager for the session's working directory, or none. */
export type LspProvider = () => LspManager | undefined

/** Makes the manager of a working directory (or none: LSP not configured there). */
export type LspFactory = (cwd: string) => LspManager | undefined

/** The production factory: a manager over the process-wide server registry. */
export function autoDetectLsp(opts: Omit<LspManagerOptions, 'cwd'> & { logger?: Logger } = {}): LspFactory {
  return (cwd) => new LspManager({ ...opts, cwd })
}

/**
 * A provider over `factory` for a session: managers are made lazily, one per working
 * directory (a session that moves to another directory gets fresh discovery and servers), and
 * all shut down by `shutdown()`.
 */
export function lazyProvider(
  factory: LspFactory,
  cwd: () => string,
): { provider: LspProvider; shutdown(): Promise<void> } {
  const managers = new Map<string, LspManager | undefined>()
  let closed: Promise<void> | undefined
  return {
    provider: () => {
      if (closed) return undefined
      const dir = cwd()
      if (!managers.has(dir)) managers.set(dir, factory(dir))
      return managers.get(dir)
    },
    shutdown() {
      // Every caller waits for the same shutdown (close() starts it, the manager awaits it).
      closed ??= Promise.all([...managers.values()].map((m) => m?.shutdown() ?? Promise.resolve())).then(() =>
        managers.clear(),
      )
      return closed
    },
  }
}
