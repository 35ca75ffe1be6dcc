/**
 * A session's transcript and its sharing (specs/openapi/chimera.openapi.yaml `GET /sessions/{id}/transcript`,
 * `POST /sessions/{id}/share`), over the features' renderers and sinks (server/share/): the
 * same bodies as `chimera otter share`. Both read the session as `GET /sessions/{id}` does
 * (live, or from disk without loading it). Share errors map through the HTTP error table
 * (server/http/errors.ts): `invalid_body` (400) and `share_failed` (502, the collector named by origin only).
 * The renderers load with the first such request, not with the server.
 */
import type { OperationHandlers } from '../app.ts'
import type { HttpDeps } from '../deps.ts'
import { jsonResponse } from '../errors.ts'
import { sessionDetail } from './session-detail.ts'

type Handlers = Pick<OperationHandlers, 'sessions.getTranscript' | 'sessions.share'>

export function transcriptHandlers(deps: HttpDeps): Handlers {
  return {
    'sessions.getTranscript': async ({ path, query }) => {
      const detail = await sessionDetail(deps, path.id)
      const [{ renderTranscript }, { CSP }] = await Promise.all([
        import('../../share/transcript.ts'),
        import('../../share/transcript-html.ts'),
      ])
      const { body, contentType } = renderTranscript(detail, query.format ?? 'html')
      // The page's CSP as a header too (a <meta> cannot carry every directive and comes late), and no sniffing.
      const headers: Record<string, string> = { 'content-type': contentType, 'x-content-type-options': 'nosniff' }
      if (contentType.startsWith('text/html'))
        Object.assign(headers, { 'content-security-policy': CSP, 'referrer-policy': 'no-referrer' })
      return new Response(body, { status: 200, headers })
    },
    'sessions.share': async ({ path, body }) => {
      const b = body
      const detail = await sessionDetail(deps, path.id)
      const { share } = await import('../../share/share.ts')
      return jsonResponse(200, await share(detail, { sink: b.sink, format: b.format, url: b.url, env: deps.env }))
    },
  }
}
