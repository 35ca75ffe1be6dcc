/** What the turn loop and the permission gate need from their session (kept narrow on purpose). */
import type { ChatMessage, Usage } from '../../generated/schemas.gen.ts'
import type { Logger } from '../log.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { SessionMeta } from '../store/types.ts'
import type { SandboxMode, Tool } from '../tools/types.ts'
import type { EventData, EventOf, EventType } from './events.ts'
import type { ModelRegistry } from './models.ts'
import type { ApprovalPolicy, PermissionAuditLog, PermissionDecision, Rule } from './permissions.ts'

export interface PermissionReply {
  decision: PermissionDecision | 'cancelled'
  /** Who answered: a transport name (`http`, `acp`, `rpc`), or `cancel`. */
  source: string
}

export interface TurnHost {
  readonly meta: SessionMeta
  readonly model: string
  readonly models: ModelRegistry
  readonly tools: ReadonlyMap<string, Tool>
  readonly sandbox: SandboxMode
  readonly logger: Logger
  readonly rules: ReadonlyMap<string, Rule>
  readonly audit: PermissionAuditLog
  readonly approval: ApprovalPolicy
  /** Append an event (assigns the next counter; persisted before subscribers see it). */
  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>>
  /** The history the model sees. */
  messages(): ChatMessage[]
  /** Tools offered to the model in this session (allow-list and mode applied). */
  availableTools(): ToolSchema[]
  /** Steering messages waiting for the next model call (taken once). */
  takeSteering(): string[]
  hasSteering(): boolean
  /** The model has finished: true when the turn may end (closes steering), false when a steering message waits. */
  finishTurn(): boolean
  /** Register a pending permission request; resolves with the reply and who gave it. */
  waitForPermission(requestId: string): Promise<PermissionReply>
  /** Compact the history if it no longer fits the model's context (inside a turn). */
  autoCompact(): Promise<void>
  /** Usage of the current turn so far. */
  turnUsage(): Usage
}
