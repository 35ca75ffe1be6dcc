/**
 * A fetch wrapper for tests that shows every exchange to the conformance sniffers: JSON and text
 * answers to the HttpSniffer, each record of an event stream to an SseSniffer for its path (the
 * stream is passed through untouched). It also lists the operations it saw.
 */
import { createParser } from 'eventsource-parser'
import { HttpSniffer, SseSniffer, findOperation, type Violation } from './sniffer.ts'

export interface SniffingFetch {
  fetch: (req: Request) => Promise<Response>
  violations(): Violation[]
  /** operationId of every exchange, in order. */
  seen: string[]
  /** SSE records seen, per path. */
  records: { path: string; id?: string; event?: string; data: string }[]
  /** The next request is sent invalid on purpose: its body is not checked (the answer still is). */
  expectInvalidRequest(): void
}

export function sniffingFetch(
  inner: (req: Request) => Promise<Response> = (req) => globalThis.fetch(req),
): SniffingFetch {
  const http = new HttpSniffer()
  const sse: SseSniffer[] = []
  const seen: string[] = []
  const records: SniffingFetch['records'] = []
  let invalidNext = false
  return {
    seen,
    records,
    expectInvalidRequest: () => {
      invalidNext = true
    },
    violations: () => [...http.violations, ...sse.flatMap((s) => s.violations)],
    fetch: async (req) => {
      const invalid = invalidNext
      invalidNext = false
      const url = new URL(req.url)
      const requestText = req.body ? await req.clone().text() : ''
      const res = await inner(req)
      const op = findOperation(req.method, url.pathname)
      seen.push(op?.operationId ?? `${req.method} ${url.pathname}`)
      const type = res.headers.get('content-type')
      if ((type ?? '').startsWith('text/event-stream') && res.body) {
        const sniffer = new SseSniffer(url.pathname)
        sse.push(sniffer)
        let retry: number | undefined
        const parser = createParser({
          onRetry: (ms) => (retry = ms),
          onEvent: (e) => {
            records.push({ path: url.pathname, id: e.id, event: e.event, data: e.data })
            sniffer.frame('out', { id: e.id, event: e.event, data: e.data, retry })
            retry = undefined
          },
        })
        const dec = new TextDecoder()
        const body = res.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, c) {
              parser.feed(dec.decode(chunk, { stream: true }))
              c.enqueue(chunk)
            },
          }),
        )
        return new Response(body, { status: res.status, headers: res.headers })
      }
      const text = await res.clone().text()
      let body: unknown = text
      if ((type ?? '').startsWith('application/json')) body = JSON.parse(text)
      let requestBody: unknown
      if (requestText) requestBody = JSON.parse(requestText)
      http.exchange(
        {
          method: req.method,
          path: url.pathname + url.search,
          requestBody,
          status: res.status,
          contentType: type,
          body: res.status === 204 ? undefined : body,
        },
        { invalid },
      )
      return res
    },
  }
}
