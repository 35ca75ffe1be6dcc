/**
 * Compile-time checks of the handler contracts (run by `make typecheck`; nothing imports this
 * file): the generated method tables type every handler, so each mistake below must fail to
 * compile. If one compiles, its `@ts-expect-error` is unused and tsc fails.
 */
import type { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import type { HandlersFor, TypedHandler } from '../jsonrpc/dispatcher.ts'
import type { SeedHandlers } from './seed/agent.ts'
import type { V1Handlers } from './v1/agent.ts'

type V1 = typeof acpV1Methods

// A params field the spec does not have.
// @ts-expect-error sessionId is a string, not a number
export const wrongParams: TypedHandler<V1['session/cancel']> = (p: { sessionId: number }) => void p

// A result the spec does not allow.
// @ts-expect-error stopReason must be one of the spec's enum values
export const wrongResult: TypedHandler<V1['session/prompt']> = () => ({ stopReason: 'finished' })

// A handler table missing a method the spec defines.
// @ts-expect-error session/list is missing
export const missing: Pick<V1Handlers, 'session/list' | 'session/new'> = { 'session/new': () => ({ sessionId: 's' }) }

// A seed handler table keyed by a method the seed spec does not have.
export const extra: Partial<SeedHandlers> = {
  // @ts-expect-error session/rename is not a seed method
  'session/rename': () => ({ ok: true }),
}

// Agent-to-client methods are not handlers of the agent.
// @ts-expect-error fs/read_text_file is sent by the agent, never received
export const outbound: HandlersFor<V1>['fs/read_text_file'] = () => ({ content: '' })
