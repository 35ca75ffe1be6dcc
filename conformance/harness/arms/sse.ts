/**
 * The SSE arms: open event streams (in process, or over a real loopback socket) and parse them with
 * eventsource-parser (spec-exact field and line handling). A received item is a record
 * `{id?, event, data, retry?}` with `data` parsed as JSON (the raw text stays in `dataText`),
 * after one `{status, headers, stream: true}` item for the response head; `{closed: true}` when
 * the server ends the stream.
 * A response that is not an event stream is received as `{status, headers, body}`. Plain
 * HTTP sends are allowed too, to trigger events.
 */
import { createParser } from 'eventsource-parser'
import { SseSniffer, type Violation } from '../sniffer.ts'
import { HttpArm, readReply, type HttpTarget } from './http.ts'

export class SseArm extends HttpArm {
  #stream: AbortController | undefined
  #reading: Promise<void> | undefined
  #reader: ReadableStreamDefaultReader<string> | undefined
  #sse: SseSniffer[] = []
  /** Items of the open stream: a stream that is closed or replaced takes its unread ones with it. */
  #items = new WeakSet<object>()

  constructor(name: 'sse-inprocess' | 'sse-socket', target: HttpTarget) {
    super(name, target)
  }

  async open(path: string, headers: Record<string, string>): Promise<void> {
    await this.close()
    const ctl = new AbortController()
    this.#stream = ctl
    const res = await this.target.fetch(
      new Request(new URL(path, this.target.baseUrl), {
        headers: { accept: 'text/event-stream', ...headers },
        signal: ctl.signal,
      }),
    )
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || !res.body) {
      const reply = await readReply(res)
      this.sniffer.exchange({
        method: 'GET',
        path,
        status: reply.status,
        contentType: reply.headers['content-type'] ?? null,
        body: reply.body,
      })
      this.inbox.push(reply)
      return
    }
    const headersOut = Object.fromEntries([...res.headers].map(([k, v]) => [k.toLowerCase(), v]))
    this.sniffer.exchange({
      method: 'GET',
      path,
      status: res.status,
      contentType: headersOut['content-type'] ?? null,
      body: undefined,
    })
    // The first item of a stream is its response head, so transcripts can check the headers.
    const push = (item: Record<string, unknown>): void => {
      this.#items.add(item)
      this.inbox.push(item)
    }
    push({ status: res.status, headers: headersOut, stream: true })
    const sniffer = new SseSniffer(path)
    this.#sse.push(sniffer)
    let retry: number | undefined
    const parser = createParser({
      onRetry: (ms) => {
        retry = ms
      },
      onEvent: (e) => {
        const record: Record<string, unknown> = { event: e.event ?? 'message', dataText: e.data }
        if (e.id !== undefined) record.id = e.id
        if (retry !== undefined) record.retry = retry
        retry = undefined
        try {
          record.data = JSON.parse(e.data)
        } catch {
          record.data = e.data
        }
        sniffer.frame('out', { id: e.id, event: e.event, data: e.data, retry: record.retry })
        push(record)
      },
    })
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    this.#reader = reader
    this.#reading = (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          parser.feed(value)
        }
        if (this.#reader === reader) push({ closed: true })
      } catch {
        // aborted by close()
      }
    })()
  }

  async close(): Promise<void> {
    const reader = this.#reader
    this.#reader = undefined
    this.#stream?.abort()
    // An in-process body does not see the request's abort: cancel the read side too.
    await reader?.cancel().catch(() => {})
    await this.#reading
    const items = this.#items
    this.inbox.discard((i) => typeof i === 'object' && i !== null && items.has(i))
    this.#items = new WeakSet()
    this.#stream = undefined
    this.#reading = undefined
  }

  override violations(): Violation[] {
    return [...this.sniffer.violations, ...this.#sse.flatMap((s) => s.violations)]
  }

  override async dispose(): Promise<void> {
    await this.close()
    await super.dispose()
  }
}
