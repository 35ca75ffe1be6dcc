/**
 * A session's settings and housekeeping, each recorded as an event: model, mode, approval
 * policy, title, and compaction of the history (on request while idle, or automatically when it
 * no longer fits the model's context).
 */
import type { EventOf } from '../events/event-types.ts'
import { AUTO_COMPACT_RATIO, currentTurnStart, estimateTokens, summarise } from './compaction.ts'
import type { ApprovalPolicy } from './permissions.ts'
import { ChimeraError } from '../errors.ts'
import { checkMode } from './modes.ts'
import type { SessionCore, SessionStatus } from './session-types.ts'

/** The longest title a session may have (specs/schemas/common.yaml SessionSummary.title). */
export const TITLE_MAX = 200
/** A title as kept: whitespace runs (newlines too) become one space, trimmed; blank is `null` (no title). */
export const normalizeTitle = (title: string | null | undefined): string | null =>
  title?.replace(/\s+/g, ' ').trim() || null
export { MODES, type Mode } from './modes.ts'

/** Summarise the history into one message (an event records it). Only while idle. */
export async function compact(core: SessionCore, status: SessionStatus): Promise<EventOf<'compaction'>> {
  if (status !== 'idle') throw new ChimeraError('session_busy', 'cannot compact while a turn is running')
  const before = core.state.messages
  const summary = summarise(before)
  return core.emit('compaction', { summary, messages_before: before.length, messages_after: 1 })
}

/** Compact the history before the current turn when it no longer fits the model's context. */
export async function autoCompact(core: SessionCore): Promise<void> {
  const model = core.state.model
  const provider = core.deps.models.providerFor(model)
  if (!provider) return
  const messages = core.state.messages
  if (estimateTokens(messages) <= provider.contextWindow(model) * AUTO_COMPACT_RATIO) return
  const start = currentTurnStart(messages)
  if (start <= 0) return // nothing before the current turn to summarise
  const kept = messages.length - start
  await core.emit('compaction', {
    summary: summarise(messages.slice(0, start)),
    messages_before: messages.length,
    messages_after: kept + 1,
  })
}

export async function setModel(core: SessionCore, model: string): Promise<void> {
  core.deps.models.check(model)
  const old = core.state.model
  if (model === old) return
  await core.emit('model_changed', { old, new: model })
}

export async function setMode(core: SessionCore, mode: string): Promise<void> {
  checkMode(mode)
  const old = core.state.mode
  if (mode === old) return
  await core.emit('mode_changed', { old, new: mode })
}

export async function setApproval(core: SessionCore, old: ApprovalPolicy, policy: ApprovalPolicy): Promise<void> {
  if (policy === old) return
  await core.emit('approval_changed', { old, new: policy })
}

/**
 * Set (or, with `null` or a blank string, clear) the session's title: `normalizeTitle`d, at most
 * `TITLE_MAX` characters (longer is an `Error` naming the limit). Recorded as a
 * `session_renamed` event (durable before it resolves); the summary on disk is rewritten with
 * it. Setting the title it already has records nothing.
 */
export async function rename(core: SessionCore, title: string | null): Promise<void> {
  const next = normalizeTitle(title)
  if (next !== null && next.length > TITLE_MAX)
    throw new RangeError(`title: at most ${TITLE_MAX} characters (got ${next.length})`)
  if (next === (core.state.summary.title ?? null)) return
  await core.emit('session_renamed', { title: next })
  await core.writeSummary()
}
