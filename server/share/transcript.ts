/**
 * Transcripts (specs/openapi/chimera.openapi.yaml `GET /sessions/{id}/transcript`, `chimera otter share`): a session
 * rendered as HTML, Markdown or JSON, and a read-only loader of a stored session's summary and
 * events. The loader never repairs or moves anything (a live server may be appending to the
 * same directory): it returns the valid prefix of the log, as the store would.
 */
import { join } from 'node:path'
import type { components } from '../../generated/http/openapi.gen.d.ts'
import { sessionNotFound } from '../errors.ts'
import { readJsonFile, scanLog } from '../store/file-log.ts'
import { isSessionId } from '../store/paths.ts'
import type { SessionMeta } from '../store/types.ts'
import { metaProblem, minimalSummary, validateSummary } from '../store/validate.ts'
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

/** A stored session's summary and events (`GET /sessions/{id}`), read only. */
export async function readSessionDetail(eventlogRoot: string, id: string): Promise<SessionDetail> {
  if (!isSessionId(id)) throw sessionNotFound(id)
  const dir = join(eventlogRoot, id)
  const meta = await readJsonFile(join(dir, 'session.json'))
  if (meta.kind !== 'ok' || metaProblem(meta.value) !== undefined || (meta.value as SessionMeta).session_id !== id)
    throw sessionNotFound(id)
  const { events } = await scanLog(dir, id, 0)
  const s = await readJsonFile(join(dir, 'summary.json'))
  let summary
  try {
    summary = validateSummary(id, s.kind === 'ok' ? s.value : undefined)
  } catch {
    summary = minimalSummary(meta.value as SessionMeta, events.length)
  }
  return { session_id: id, summary, events }
}
