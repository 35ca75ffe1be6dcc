/**
 * Transcripts (specs/openapi/chimera.openapi.yaml `GET /sessions/{id}/transcript`, `chimera otter share`): a session
 * rendered as HTML, Markdown or JSON, and a read-only loader of a stored session's summary and
 * events through the store (`EventStore.readSession`): it never repairs or moves anything (a
 * live server may be appending to the same session) and returns the valid prefix of the log.
 */
import type { components } from '../../generated/http/openapi.gen.d.ts'
import { sessionNotFound } from '../errors.ts'
import type { EventStore } from '../store/types.ts'
import { renderHtml } from './transcript-html.ts'
import { renderMarkdown } from './transcript-md.ts'
import type { SessionDetail } from './transcript-model.ts'

export type { SessionDetail } from './transcript-model.ts'
export type TranscriptFormat = components['schemas']['TranscriptFormat']
export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = ['html', 'md', 'json']

export const CONTENT_TYPES: Readonly<Record<TranscriptFormat, string>> = {
  html: 'text/html; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  json: 'application/json',
}

export const isTranscriptFormat = (v: unknown): v is TranscriptFormat =>
  typeof v === 'string' && (TRANSCRIPT_FORMATS as readonly string[]).includes(v)

/** The session rendered in `format`, with its content type. */
export function renderTranscript(
  detail: SessionDetail,
  format: TranscriptFormat,
): { body: string; contentType: string } {
  const body =
    format === 'html'
      ? renderHtml(detail)
      : format === 'md'
        ? renderMarkdown(detail)
        : `${JSON.stringify({ session_id: detail.session_id, summary: detail.summary, events: detail.events }, null, 2)}\n`
  return { body, contentType: CONTENT_TYPES[format] }
}

/** A stored session's summary and events (`chimera otter sessions show`, `share`), read only. */
export async function readSessionDetail(store: EventStore, id: string): Promise<SessionDetail> {
  const stored = await store.readSession(id)
  if (!stored) throw sessionNotFound(id)
  return { session_id: id, summary: stored.summary, events: stored.events }
}
