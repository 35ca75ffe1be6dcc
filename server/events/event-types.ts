/**
 * The canonical event stream of a session, typed from the spec (specs/schemas/events.yaml):
 * `EventOf<'text_delta'>` is an event whose `data` is `TextDeltaData`, and so on. Every wire
 * format (SSE, ACP `session/update`, JSON-lines) is a mapping of these events.
 */
import type { z } from 'zod'
import { EventDataByTypeSchema, type ChimeraEvent, type EventType } from '../../generated/schemas.gen.ts'
import { EVENT_TYPE_NAMES, TURN_ENDING_EVENTS } from '../../generated/event-facts.gen.ts'

export type { EventType }
export type EventDataByType = z.infer<typeof EventDataByTypeSchema>
export type EventData<T extends EventType> = z.input<typeof EventDataByTypeSchema>[T]

/** One stored event whose `data` matches its `type`. */
export type EventOf<T extends EventType> = Omit<ChimeraEvent, 'type' | 'data'> & { type: T; data: EventDataByType[T] }
export type AnyEvent = { [T in EventType]: EventOf<T> }[EventType]

/** Every event type, in spec order. */
export const EVENT_TYPES: readonly EventType[] = EVENT_TYPE_NAMES

/** Validate `data` for `type` against the spec (throws a ZodError on mismatch). */
export function checkEventData<T extends EventType>(type: T, data: unknown): EventDataByType[T] {
  return EventDataByTypeSchema.shape[type].parse(data) as EventDataByType[T]
}

/** Events that end a turn (the spec's `x-turn-ending`); on the plural SSE stream `end` follows one. */
export const TERMINAL_EVENTS: ReadonlySet<EventType> = new Set(TURN_ENDING_EVENTS)
