/**
 * Sharing a transcript (specs/openapi/chimera.openapi.yaml `POST /sessions/{id}/share`, `chimera otter share`): one code
 * path for every transport. Sinks:
 * - `file`: written under `<CHIMERA_HOME>/shares/` (created private) as
 *   `<session-id>-<utc>.<ext>`, mode 0600, never overwriting; the result holds the path;
 * - `http`: POSTed to `url` (default `OTTER_SHARE_URL`) with the format's content type and a
 *   timeout; the result holds the collector's status and reply;
 * - `stdout`: the rendered body is returned.
 * Errors are `invalid_share` for a bad sink, format or URL (HTTP 400 `invalid_body`), `share_failed`
 * (HTTP 502) when the collector cannot be reached, times out, redirects or answers non-2xx. Error
 * messages name the collector by origin only (a URL may carry credentials).
 */
import { randomUUID } from '../platform/random.ts'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { components } from '../../generated/http/openapi.gen.d.ts'
import { ChimeraError } from '../errors.ts'
import { chimeraHome, isSessionId } from '../store/paths.ts'
import { isTranscriptFormat, renderTranscript, type SessionDetail, type TranscriptFormat } from './transcript.ts'

export type ShareResult = components['schemas']['ShareResult']
export type ShareSink = ShareResult['sink']
export const SHARE_SINKS: readonly ShareSink[] = ['file', 'http', 'stdout']
export const DEFAULT_SHARE_TIMEOUT_MS = 10_000
/** Replies larger than this are cut (the result is for people and logs, not storage). */
const MAX_REPLY_BYTES = 64 * 1024

export interface ShareOptions {
  sink: unknown
  /** Default `html`. */
  format?: unknown
  /** The `http` sink's collector (default `OTTER_SHARE_URL`). */
  url?: unknown
  env?: NodeJS.ProcessEnv
  /** Where the `file` sink writes (default `<CHIMERA_HOME>/shares`). */
  dir?: string
  timeoutMs?: number
  /** The fetch to use (tests; default the global one). */
  fetch?: typeof globalThis.fetch
}

const EXT: Record<TranscriptFormat, string> = { html: 'html', md: 'md', json: 'json' }

/** Check the options before anything is rendered or sent (every problem is a 400). */
function check(o: ShareOptions): { sink: ShareSink; format: TranscriptFormat; url?: URL } {
  if (typeof o.sink !== 'string' || !(SHARE_SINKS as readonly string[]).includes(o.sink))
    throw new ChimeraError('invalid_share', `sink must be one of ${SHARE_SINKS.join(', ')}`)
  const format = o.format ?? 'html'
  if (!isTranscriptFormat(format)) throw new ChimeraError('invalid_share', 'format must be one of html, md, json')
  const sink = o.sink as ShareSink
  if (sink !== 'http') {
    if (o.url !== undefined) throw new ChimeraError('invalid_share', 'url applies only to the http sink')
    return { sink, format }
  }
  const env = o.env ?? process.env
  const raw = o.url ?? (env.OTTER_SHARE_URL || undefined)
  if (raw === undefined) throw new ChimeraError('invalid_share', 'the http sink needs a url (or OTTER_SHARE_URL)')
  if (typeof raw !== 'string') throw new ChimeraError('invalid_share', 'url must be a string')
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ChimeraError('invalid_share', 'url is not a valid absolute URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ChimeraError('invalid_share', 'url must be http or https')
  return { sink, format, url }
}

/** The URL as shown in a result: without user name and password. */
function shown(url: URL): string {
  const u = new URL(url.href)
  u.username = ''
  u.password = ''
  return u.href
}

/** Render `detail` and send it to the sink. */
export async function share(detail: SessionDetail, o: ShareOptions): Promise<ShareResult> {
  const { sink, format, url } = check(o)
  const { body, contentType } = renderTranscript(detail, format)
  if (sink === 'stdout') return { sink, format, body }
  if (sink === 'file') return { sink, format, path: await writeShareFile(detail.session_id, format, body, o) }
  return { sink, format, ...(await post(url!, body, contentType, o)) }
}

async function writeShareFile(id: string, format: TranscriptFormat, body: string, o: ShareOptions): Promise<string> {
  if (!isSessionId(id)) throw new ChimeraError('invalid_share', 'not a session id')
  const dir = o.dir ?? join(chimeraHome(o.env ?? process.env), 'shares')
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const path = join(dir, `${id}-${stamp}-${randomUUID().slice(0, 8)}.${EXT[format]}`)
  await writeFile(path, body, { flag: 'wx', mode: 0o600 })
  return path
}

async function post(
  url: URL,
  body: string,
  contentType: string,
  o: ShareOptions,
): Promise<{ url: string; status_code: number; reply: unknown }> {
  const fetchFn = o.fetch ?? globalThis.fetch
  const ms = o.timeoutMs ?? DEFAULT_SHARE_TIMEOUT_MS
  const where = url.origin
  // Credentials in the URL become a Basic authorization header (fetch refuses them in a URL).
  const target = new URL(shown(url))
  const headers: Record<string, string> = {
    'content-type': contentType,
    accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
  }
  if (url.username || url.password)
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
  let res: Response
  try {
    res = await fetchFn(target, { method: 'POST', body, headers, redirect: 'manual', signal: AbortSignal.timeout(ms) })
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } }
    if (e.name === 'TimeoutError' || e.name === 'AbortError')
      throw new ChimeraError('share_failed', `the collector at ${where} did not answer within ${ms} ms`)
    const why = (e.cause?.code ?? e.cause?.message ?? e.message)
      .split(url.href)
      .join(where)
      .split(target.href)
      .join(where)
    throw new ChimeraError('share_failed', `could not reach the collector at ${where}: ${why}`)
  }
  let reply: unknown
  try {
    reply = await readReply(res)
  } catch (err) {
    const e = err as Error
    throw new ChimeraError(
      'share_failed',
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? `the collector at ${where} did not finish its reply within ${ms} ms`
        : `the collector at ${where} broke off its reply: ${e.message}`,
    )
  }
  if (res.status < 200 || res.status > 299)
    throw new ChimeraError('share_failed', `the collector at ${where} returned ${res.status}`, {
      detail: { status_code: res.status, reply },
    })
  return { url: shown(url), status_code: res.status, reply }
}

/** The reply body (at most MAX_REPLY_BYTES), parsed as JSON when it says it is JSON. */
async function readReply(res: Response): Promise<unknown> {
  if (!res.body) return null
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.length
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => {})
      break
    }
  }
  const text = Buffer.concat(chunks).subarray(0, MAX_REPLY_BYTES).toString('utf8')
  if (text === '') return null
  if (/\bjson\b/i.test(res.headers.get('content-type') ?? '')) {
    try {
      return JSON.parse(text) as unknown
    } catch {
      // not JSON after all: keep the text
    }
  }
  return text
}
