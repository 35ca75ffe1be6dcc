/** What the turn loop and the permission gate need from their session (kept narrow on purpose). */
import type { ChatMessage, ToolCall, Usage } from '../../generated/schemas.gen.ts'
import type { Logger } from '../log.ts'
import type { ToolSchema } from '../providers/types.ts'
import type { SessionMeta } from '../store/types.ts'
import type { Tool, ToolContext } from '../tools/types.ts'
import type { EventData, EventOf, EventType } from '../events/event-types.ts'
import type { TurnToken } from './cancel.ts'
import type { SteerMessage } from './steering.ts'
import type { ModelRegistry } from './model-registry.ts'
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
  readonly logger: Logger
  readonly rules: ReadonlyMap<string, Rule>
  readonly audit: PermissionAuditLog
  readonly approval: ApprovalPolicy
  /** Append an event and wait until it is persisted (throws EventLogError when it cannot be). */
  emit<T extends EventType>(type: T, data: EventData<T>): Promise<EventOf<T>>
  /**
   * Append an event without waiting for it to be persisted: it goes to disk with the events
   * around it in one group commit. A failure surfaces as EventLogError from the next `emit` or
   * `barrier` (and the recorded events after it are not written).
   */
  record<T extends EventType>(type: T, data: EventData<T>): void
  /** Wait until every event so far is persisted and folded into the state (throws a recorded event's EventLogError). */
  barrier(): Promise<void>
  /** Stream a chunk of text / reasoning (key: the step) or tool progress (key: the call), coalesced. */
  emitChunk(
    type: 'text_delta' | 'reasoning' | 'tool_progress',
    key: string,
    data: Record<string, unknown>,
  ): Promise<void>
  /** The history the model sees. */
  messages(): ChatMessage[]
  /** Tools offered to the model in this session (allow-list and mode applied). */
  availableTools(): ToolSchema[]
  /** The context a tool call runs with (sandbox, protected paths, file tracking, callbacks). */
  toolContext(call: ToolCall, token: TurnToken): ToolContext
  /** Steering messages waiting for the next model call whose entries are on disk (taken once). */
  takeSteering(): Promise<SteerMessage[]>
  /** The model has finished: true when the turn may end (closes steering), false when a steering message waits. */
  finishTurn(): boolean
  /** Why no client can answer a permission request now (e.g. input ended), or undefined. */
  unanswerable(): string | undefined
  /** Register a pending permission request; resolves with the reply and who gave it. */
  waitForPermission(requestId: string): Promise<PermissionReply>
  /** Compact the history if it no longer fits the model's context (inside a turn). */
  autoCompact(): Promise<void>
  /** Usage of the current turn so far. */
  turnUsage(): Usage
}
