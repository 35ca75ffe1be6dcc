/**
 * HTTP + SSE adapter (docs/http.md; specs/openapi/chimera.openapi.yaml, specs/asyncapi/sse.asyncapi.yaml):
 * the singular family, which stays open across turns. `POST /session {working_dir}`, the event
 * stream `GET /session/{id}/events` (its `id:` lines are the event ids), `POST
 * /session/{id}/message`, `POST /session/{id}/cancel`, `POST /tool/approve`, and resume by
 * reconnecting with `Last-Event-ID`. Every exchange and every SSE record goes through the sniffer.
 */
import { createParser } from 'eventsource-parser'
import { HttpSniffer, SseSniffer } from '../../harness/sniffer.ts'
import { Inbox } from '../../harness/arms/queue.ts'
import type { Decision, Outcome } from '../corpus/scenario.ts'
import { toKitViolation, type KitViolation } from '../run/violations.ts'
import { Unsupported, type Adapter, type AdapterContext, type Observation } from './types.ts'

export interface HttpEndpoint {
  baseUrl: string
  token?: string
}

interface Stream {
  ctl: AbortController
  reading: Promise<void>
  sniffer: SseSniffer
  replay: boolean
}

const TERMINAL: Record<string, Outcome> = { cancelled: 'cancelled', error: 'failed' }

export class HttpAdapter implements Adapter {
  readonly transport = 'http' as const
  readonly #ctx: AdapterContext
  readonly #ep: HttpEndpoint
  readonly #sniffer = new HttpSniffer()
  readonly #inbox = new Inbox<Observation>()
  readonly #sessions = new Map<string, string>()
  readonly #streams = new Map<string, Stream>()
  readonly #sse: SseSniffer[] = []
  readonly #log: string[] = []

  constructor(ep: HttpEndpoint, ctx: AdapterContext) {
    this.#ep = ep
    this.#ctx = ctx
  }

  capabilities(): ReadonlySet<string> {
    return new Set(['event-ids', 'resume', 'permissions'])
  }

  #headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...(this.#ep.token ? { authorization: `Bearer ${this.#ep.token}` } : {}), ...extra }
  }

  #note(line: string): void {
    this.#log.push(line.slice(0, 300))
    if (this.#log.length > 40) this.#log.shift()
  }

  async #call(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const headers = this.#headers(body === undefined ? {} : { 'content-type': 'application/json' })
    this.#note(`>> ${method} ${path} ${body === undefined ? '' : JSON.stringify(body)}`)
    const res = await fetch(new URL(path, this.#ep.baseUrl), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.#ctx.timeoutMs),
    })
    const text = await res.text()
    let parsed: unknown = text === '' ? undefined : text
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try {
        parsed = JSON.parse(text)
      } catch {
        // the sniffer reports a body that does not parse
      }
    }
    this.#note(`<< ${res.status} ${text.slice(0, 200)}`)
    this.#sniffer.exchange({
      method,
      path,
      requestBody: body,
      status: res.status,
      contentType: res.headers.get('content-type'),
      body: parsed,
    })
    return { status: res.status, body: parsed }
  }

  async open(session: string): Promise<void> {
    const r = await this.#call('POST', '/session', { working_dir: this.#ctx.workspace })
    const id = (r.body as { session_id?: unknown })?.session_id
    if (r.status !== 201 || typeof id !== 'string')
      throw new Error(`POST /session answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
    this.#sessions.set(session, id)
    await this.#openStream(session, undefined)
  }

  #sid(session: string): string {
    const id = this.#sessions.get(session)
    if (!id) throw new Error(`session ${session} is not open`)
    return id
  }

  async #openStream(session: string, lastEventId: number | undefined): Promise<void> {
    await this.#closeStream(session)
    const path = `/session/${encodeURIComponent(this.#sid(session))}/events`
    const ctl = new AbortController()
    const headers = this.#headers({
      accept: 'text/event-stream',
      ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }),
    })
    this.#note(`>> GET ${path}${lastEventId === undefined ? '' : ` Last-Event-ID: ${lastEventId}`}`)
    // A server that never sends the response head must not hang the run.
    const timer = setTimeout(
      () => ctl.abort(new Error(`GET ${path}: no response head within ${this.#ctx.timeoutMs} ms`)),
      this.#ctx.timeoutMs,
    )
    let res: Response
    try {
      res = await fetch(new URL(path, this.#ep.baseUrl), { headers, signal: ctl.signal })
    } catch (e) {
      throw ctl.signal.aborted ? (ctl.signal.reason as Error) : e
    } finally {
      clearTimeout(timer)
    }
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || !res.body) {
      const text = await res.text()
      throw new Error(`GET ${path} answered ${res.status} ${res.headers.get('content-type')} ${text.slice(0, 200)}`)
    }
    const sniffer = new SseSniffer(path)
    this.#sse.push(sniffer)
    const stream: Stream = { ctl, sniffer, replay: lastEventId !== undefined, reading: Promise.resolve() }
    const parser = createParser({
      onEvent: (e) => {
        this.#note(`<< ${e.id === undefined ? '' : `id:${e.id} `}${e.event ?? 'message'} ${e.data.slice(0, 200)}`)
        sniffer.frame('out', { id: e.id, event: e.event, data: e.data })
        this.#record(session, stream, e.id, e.data)
      },
    })
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
    stream.reading = (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          parser.feed(value)
        }
      } catch {
        // aborted
      }
    })()
    this.#streams.set(session, stream)
  }

  #record(session: string, stream: Stream, id: string | undefined, text: string): void {
    let env: Record<string, any>
    try {
      env = JSON.parse(text)
    } catch {
      return
    }
    const type = String(env.type)
    const d = env.data ?? {}
    const eventId = id !== undefined && /^\d+$/.test(id) ? Number(id) : undefined
    const base = { session, eventId, wireType: type, frame: env, replay: stream.replay || undefined }
    const tool = (name: unknown) => ({ tool: String(name), action: this.#ctx.profile.actionOfTool(String(name)) })
    switch (type) {
      case 'text_delta':
        return this.#inbox.push({ ...base, kind: 'text', text: String(d.text) })
      case 'reasoning':
        return this.#inbox.push({ ...base, kind: 'thought', text: String(d.text) })
      case 'tool_call':
        return this.#inbox.push({
          ...base,
          kind: 'tool_call',
          callId: String(d.call_id),
          args: d.args,
          ...tool(d.tool),
        })
      case 'tool_result':
        return this.#inbox.push({
          ...base,
          kind: 'tool_result',
          callId: String(d.call_id),
          ok: d.ok === true,
          output: String(d.output ?? d.error ?? ''),
          ...tool(d.tool),
        })
      case 'permission_request':
        return this.#inbox.push({
          ...base,
          kind: 'permission',
          requestId: String(d.request_id),
          callId: String(d.call_id),
          args: d.args,
          ...tool(d.tool),
        })
      case 'agent_result':
        return this.#inbox.push({
          ...base,
          kind: 'turn_end',
          outcome: d.success === true ? 'completed' : 'failed',
          output: String(d.output ?? ''),
        })
      case 'cancelled':
      case 'error':
        return this.#inbox.push({
          ...base,
          kind: 'turn_end',
          outcome: TERMINAL[type]!,
          output: String(d.message ?? d.partial_output ?? ''),
        })
      default:
        return this.#inbox.push({ ...base, kind: 'event' })
    }
  }

  async #closeStream(session: string): Promise<void> {
    const s = this.#streams.get(session)
    if (!s) return
    s.ctl.abort()
    await s.reading
    this.#streams.delete(session)
  }

  async prompt(session: string, text: string): Promise<void> {
    const s = this.#streams.get(session)
    if (s) s.replay = false
    const r = await this.#call('POST', `/session/${encodeURIComponent(this.#sid(session))}/message`, { message: text })
    if (r.status !== 202)
      throw new Error(`POST /session/{id}/message answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
  }

  async cancel(session: string): Promise<void> {
    const r = await this.#call('POST', `/session/${encodeURIComponent(this.#sid(session))}/cancel`)
    if (r.status !== 204) throw new Error(`POST /session/{id}/cancel answered ${r.status}`)
  }

  async steer(): Promise<void> {
    throw new Unsupported('the HTTP API has no steering route')
  }

  async answer(session: string, requestId: string, decision: Decision): Promise<void> {
    const r = await this.#call('POST', '/tool/approve', {
      session_id: this.#sid(session),
      request_id: requestId,
      decision,
    })
    if (r.status !== 200)
      throw new Error(`POST /tool/approve answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
  }

  async resume(session: string, afterId: number): Promise<void> {
    await this.#openStream(session, afterId)
  }

  next(ms: number): Promise<Observation | undefined> {
    return this.#inbox.next(ms)
  }

  violations(): KitViolation[] {
    return [...this.#sniffer.violations, ...this.#sse.flatMap((s) => s.violations)].map((v) =>
      toKitViolation('http', v),
    )
  }

  transcript(): string[] {
    return [...this.#log]
  }

  async dispose(): Promise<void> {
    for (const s of [...this.#streams.keys()]) await this.#closeStream(s)
    this.#inbox.close()
  }
}
