/**
 * What every agent command (`code --mode rpc`, `otter serve`, `ferret serve`) does around its
 * transports: build the one session manager of the process from the session flags, check that
 * CHIMERA_HOME can hold event logs (one clear line when it cannot), and end gracefully on
 * SIGTERM, SIGINT or SIGHUP — running turns are cancelled and logged as cancelled, their tool
 * processes killed, every transport closed, exit 0.
 */
import { SessionManager, type ManagerOptions } from '../core/manager.ts'
import type { Logger } from '../log.ts'
import { customCommands } from '../commands/custom-commands.ts'
import { chimeraHome } from '../store/paths.ts'
import { snapshotHistory, snapshotRoot } from '../store/snapshots.ts'
import { killSupervised } from '../platform/supervisor.ts'
import { autoDetectLsp } from '../lsp/provider.ts'
import { sandboxStatus } from '../tools/sandbox.ts'
import type { AgentPrefix } from '../store/types.ts'

/** How long a process stopped by a signal may take to end once its shutdown is done. */
const EXIT_GRACE_MS = 5_000

export { eventLogProblem } from '../store/home-probe.ts'

export interface AgentProcess {
  manager: SessionManager
  /** Aborted when a termination signal arrives. */
  signal: AbortSignal
  /** Run `fn` on shutdown, after turns were cancelled and logged (transports close here). */
  onShutdown(fn: () => Promise<void> | void): void
  /** Resolves when shutdown has finished (after a signal, or `shutdown()`). */
  done: Promise<void>
  shutdown(reason: string): Promise<void>
  /** Print the start-up line about the sandbox (after the command's own checks passed). */
  announce(): void
}

export async function startAgentProcess(
  agent: AgentPrefix,
  opts: Omit<ManagerOptions, 'agent' | 'logger' | 'home'>,
  logger: Logger,
): Promise<AgentProcess> {
  const home = chimeraHome()
  const manager = new SessionManager({
    history: snapshotHistory({ home, logger }),
    commands: customCommands(),
    // A snapshot root outside CHIMERA_HOME holds other sessions' file contents too.
    protectedPaths: [snapshotRoot(home)],
    // Language servers start on the first LSP tool call, one set per session and directory.
    lsp: autoDetectLsp({ logger }),
    ...opts,
    agent,
    home,
    logger,
  })
  const controller = new AbortController()
  const hooks: (() => Promise<void> | void)[] = []
  let finished!: () => void
  const done = new Promise<void>((r) => {
    finished = r
  })
  let stopping: Promise<void> | undefined
  const shutdown = (reason: string): Promise<void> => {
    stopping ??= (async () => {
      logger.info(`${reason}: shutting down (cancelling running turns)`)
      controller.abort(new Error(reason))
      await manager.shutdown()
      // Whatever a tool started and its cancel did not reach (it is synchronous: safe at exit too).
      killSupervised('tool')
      for (const h of hooks) {
        try {
          await h()
        } catch (err) {
          logger.error('shutdown step failed', err)
        }
      }
      finished()
    })()
    return stopping
  }
  process.once('exit', () => killSupervised('tool'))
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      if (stopping) return
      // Once the turns are cancelled and their events written, the process has a few seconds to
      // end: answers a stdio client never reads (or a response a peer never takes) would otherwise
      // keep it alive for ever.
      void shutdown(`received ${sig}`).then(() => setTimeout(() => process.exit(), EXIT_GRACE_MS).unref())
    })
  }
  const announce = (): void => {
    const sandbox = sandboxStatus(opts.sandbox ?? 'workspace-write', opts.allowUnconfined ?? false)
    logger[sandbox.level === 'info' ? 'info' : 'warn'](sandbox.text)
  }
  return { manager, signal: controller.signal, onShutdown: (fn) => void hooks.push(fn), done, shutdown, announce }
}
