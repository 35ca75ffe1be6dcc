/**
 * Recordings from raw event streams: `parseSseRecording(text)` turns the body of a plural-family
 * stream saved as text (`curl -N -H 'authorization: Bearer …' http://127.0.0.1:5173/sessions/<id>/events > s.sse`)
 * into the events the mock replays. Records are checked against the spec's SSE envelope; the
 * `end` record and comments are skipped.
 */
import { createParser } from 'eventsource-parser'
import { SseEnvelopeSchema } from '../../generated/schemas.gen.ts'
import type { SessionStreamEvent } from '../events/session-events.ts'
import { formatIssues } from '../wire/issues.ts'

export function parseSseRecording(text: string): SessionStreamEvent[] {
  const out: SessionStreamEvent[] = []
  const problems: string[] = []
  const parser = createParser({
    onEvent: (m) => {
      if (m.event === 'end') return
      const seq = Number(m.id)
      if (!m.id || !Number.isSafeInteger(seq) || seq < 1)
        return void problems.push(`a ${m.event ?? 'message'} record without a counter id`)
      let data: unknown
      try {
        data = JSON.parse(m.data)
      } catch {
        return void problems.push(`record ${m.id}: data is not JSON`)
      }
      const r = SseEnvelopeSchema.safeParse(data)
      if (!r.success) return void problems.push(`record ${m.id}: ${formatIssues(r.error)}`)
      out.push({ ...(r.data as object), seq } as SessionStreamEvent)
    },
  })
  parser.feed(text.endsWith('\n\n') ? text : `${text}\n\n`)
  if (problems.length > 0)
    throw new TypeError(`not a recording of /sessions/{id}/events: ${problems.slice(0, 3).join('; ')}`)
  if (out.length === 0) throw new TypeError('the recording has no events')
  return out
}
