/**
 * A session's pending permission requests: the turn waits on one until any transport answers
 * it (or a cancel, or the end of the only client that could answer, settles it).
 */
import type { PermissionRequestData } from '../../generated/schemas.gen.ts'
import type { AnyEvent, EventOf } from '../events/event-types.ts'
import type { PermissionDecision } from './permissions.ts'
import type { PermissionReply } from './turn-host.ts'

export class PermissionBroker {
  #pending = new Map<string, { resolve: (r: PermissionReply) => void }>()
  #unanswerable: string | undefined

  /** Register a pending request; resolves with the reply and who gave it. */
  wait(requestId: string): Promise<PermissionReply> {
    return new Promise((resolve) => this.#pending.set(requestId, { resolve }))
  }

  /** Why no client can answer a request now, or undefined. */
  get unanswerable(): string | undefined {
    return this.#unanswerable
  }

  /** No client can answer any more: later requests are refused with `reason`. */
  refuse(reason: string): void {
    this.#unanswerable = reason
  }

  /** The ids of the pending requests. */
  ids(): string[] {
    return [...this.#pending.keys()]
  }

  /** Answer a pending request; false when it is not pending. */
  reply(requestId: string, decision: PermissionDecision, source: string): boolean {
    const p = this.#pending.get(requestId)
    if (!p) return false
    this.#pending.delete(requestId)
    p.resolve({ decision, source })
    return true
  }

  /** Settle every pending request as cancelled (the turn was cancelled). */
  cancelAll(): void {
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id)
      p.resolve({ decision: 'cancelled', source: 'cancel' })
    }
  }

  /** The pending requests with their data, from the log's recent events. */
  async requests(events: (afterSeq: number) => Promise<AnyEvent[]>, lastSeq: number): Promise<PermissionRequestData[]> {
    const ids = new Set(this.#pending.keys())
    if (ids.size === 0) return []
    const recent = await events(Math.max(0, lastSeq - 2000))
    return recent
      .filter((e): e is EventOf<'permission_request'> => e.type === 'permission_request' && ids.has(e.data.request_id))
      .map((e) => e.data)
  }
}
