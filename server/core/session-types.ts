/**
 * The types a session is made from and answers with: its dependencies, its status, what a
 * queued prompt and an undo/redo return, and the part of a session its helpers share
 * (session-*.ts, prompt-ledger.ts, permission-broker.ts, work-queue.ts).
 */
import type { Logger } from '../log.ts'
import type { EventStore } from '../store/types.ts'
import type { SandboxMode, Tool } from '../tools/types.ts'
import type { LspFactory } from '../lsp/provider.ts'
import type { EventData, EventOf, EventType } from '../events/event-types.ts'
import type { FileHistory } from './file-history.ts'
import type { TurnOutcome } from './loop.ts'
import type { ModelRegistry } from './model-registry.ts'
import type { ApprovalPolicy, PermissionAuditLog, Rule } from './permissions.ts'
import type { CommandRenderer } from './slash-commands.ts'
import type { SessionState } from './state.ts'

export type SessionStatus = 'idle' | 'running' | 'cancelled'

export interface SessionDeps {
  store: EventStore
  models: ModelRegistry
  tools: ReadonlyMap<string, Tool>
  rules: ReadonlyMap<string, Rule>
  audit: PermissionAuditLog
  approval: ApprovalPolicy
  sandbox: SandboxMode
  logger: Logger
  persist: boolean
  /** Real paths no tool may touch (CHIMERA_HOME, the snapshot root). */
  protectedPaths: readonly string[]
  /** Bash may run without bubblewrap in the confined modes (explicit opt-in). */
  allowUnconfined: boolean
  /** Extra environment for tool processes (project config). */
  toolEnv: Readonly<Record<string, string>>
  /** File-level undo history (absent: undo rewinds messages only). */
  history?: FileHistory
  /** Custom slash commands (`/name args`). */
  commands?: CommandRenderer
  /** Makes the LSP manager of a working directory (absent: the LSP tools say `LSP not configured`). */
  lsp?: LspFactory
  /**
   * How long after a turn's end its summary is written (absent: `TURN_SUMMARY_DELAY_MS`; 0: at
   * once, for instances sharing a store, where another instance lists the session).
   */
  summaryDelayMs?: number
}

/** The result of `/undo` or `/redo`. */
export interface RewindResult {
  turns: number
  files_restored: number
  remaining: number
  files: string[]
  output: string
}

/** A queued prompt: `accepted` resolves once it is on disk (rejects with `prompt_not_recorded`, or `session_not_found`/`store_unavailable` as the store said). */
export interface Submitted {
  messageId: string
  /** The work's outcome once all it wrote is saved (a turn: also its undo snapshot and summary). */
  done: Promise<TurnOutcome>
  /**
   * A turn's outcome as soon as its terminal event is on disk, before its undo snapshot and
   * summary are (the next work waits for those); absent for other work (then `done`).
   */
  ended?: Promise<TurnOutcome>
  accepted: Promise<void>
}

/** A custom command a user message records. */
export type Command = { name: string; arguments: string }

/** What a session's helpers share with it: its id, dependencies, folded state, and event writes. */
export interface SessionCore {
  readonly id: string
  readonly deps: SessionDeps
  readonly state: SessionState
  /** Append an event and wait until it is persisted. */
  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>>
  /** Rewrite the summary on disk (a failure is logged). */
  writeSummary(): Promise<void>
  /** Resolves once the last turn's saving (its undo snapshot and summary) has ended. */
  saved(): Promise<void>
  /** This copy gave the session up (Session.abandon): it starts nothing more. */
  abandoned(): boolean
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err))
