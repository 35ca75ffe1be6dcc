/**
 * HTTP arms. `http-inprocess` calls the app's `fetch` directly (no socket); `http-socket`
 * sends real requests to a server listening on loopback. Each exchange is checked by the
 * sniffer against the OpenAPI operation table. A received item is the response as
 * `{status, headers, body}` (body parsed when JSON).
 */
import { request as httpRequest } from 'node:http'
import type { ArmName } from '../transcript.ts'
import { HttpSniffer, type Violation } from '../sniffer.ts'
import { Inbox } from './queue.ts'
import type { Arm } from './types.ts'

export interface HttpTarget {
  baseUrl: string
  fetch(req: Request): Promise<Response>
  close(): Promise<void>
}

export interface HttpRequestSpec {
  method?: string
  path: string
  headers?: Record<string, string>
  body?: unknown
  bodyText?: string
  /** A generated body: `prefix`, `fill` repeated to `bytes` bytes in all, `suffix` (size limits). */
  bodyFill?: { prefix?: string; fill: string; bytes: number; suffix?: string }
  /**
   * Headers as a flat list of name, value pairs, sent as written (a name may repeat, e.g. two
   * `Host` headers, which `fetch` cannot send): the request goes over a real socket with
   * node:http, so only the socket arms can send it.
   */
  rawHeaders?: string[]
}

function filled(f: NonNullable<HttpRequestSpec['bodyFill']>): string {
  const prefix = f.prefix ?? ''
  const suffix = f.suffix ?? ''
  const n = Math.max(0, f.bytes - Buffer.byteLength(prefix) - Buffer.byteLength(suffix))
  return prefix + f.fill.repeat(Math.ceil(n / f.fill.length)).slice(0, n) + suffix
}

export interface HttpReply {
  status: number
  headers: Record<string, string>
  body: unknown
}

/** Read a response into `{status, headers, body}`; JSON bodies parsed. */
export async function readReply(res: Response): Promise<HttpReply> {
  const headers = Object.fromEntries([...res.headers].map(([k, v]) => [k.toLowerCase(), v]))
  const text = await res.text()
  let body: unknown = text === '' ? undefined : text
  if ((headers['content-type'] ?? '').includes('json') && text !== '') {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  return { status: res.status, headers, body }
}

/** An HTTP reply or a stream's response head (`{status, ...}`), not one of its records. */
const isReply = (item: unknown): boolean =>
  typeof item === 'object' && item !== null && typeof (item as { status?: unknown }).status === 'number'

export class HttpArm implements Arm {
  readonly name: ArmName
  protected readonly target: HttpTarget
  protected readonly inbox = new Inbox<unknown>()
  protected readonly sniffer = new HttpSniffer()

  constructor(name: ArmName, target: HttpTarget) {
    this.name = name
    this.target = target
  }

  async send(message: unknown, opts: { invalid?: boolean }): Promise<void> {
    const spec = message as HttpRequestSpec
    const method = (spec.method ?? 'GET').toUpperCase()
    const headers: Record<string, string> = { ...(spec.headers ?? {}) }
    let body: string | undefined = spec.bodyFill ? filled(spec.bodyFill) : spec.bodyText
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body)
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
        headers['content-type'] = 'application/json'
    }
    const reply = spec.rawHeaders
      ? await this.#sendRawHeaders(method, spec.path, spec.rawHeaders, body)
      : await readReply(
          await this.target.fetch(new Request(new URL(spec.path, this.target.baseUrl), { method, headers, body })),
        )
    this.sniffer.exchange(
      {
        method,
        path: spec.path,
        requestBody: spec.body,
        status: reply.status,
        contentType: reply.headers['content-type'] ?? null,
        body: reply.body,
      },
      opts,
    )
    this.inbox.push(reply)
  }

  #sendRawHeaders(method: string, path: string, raw: string[], body: string | undefined): Promise<HttpReply> {
    if (this.name.endsWith('-inprocess'))
      throw new Error(`${this.name}: rawHeaders need a real socket (limit the step to the socket arms)`)
    const url = new URL(path, this.target.baseUrl)
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: raw, timeout: 10_000 },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', reject)
          res.on('end', () => {
            const headers = Object.fromEntries(
              Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]),
            )
            const text = Buffer.concat(chunks).toString('utf8')
            let parsed: unknown = text === '' ? undefined : text
            if ((headers['content-type'] ?? '').includes('json') && text !== '') {
              try {
                parsed = JSON.parse(text)
              } catch {
                // kept as text: the sniffer reports a body that does not parse
              }
            }
            resolve({ status: res.statusCode ?? 0, headers, body: parsed })
          })
        },
      )
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)))
      req.on('error', reject)
      req.end(body)
    })
  }

  async sendRaw(): Promise<void> {
    throw new Error(`${this.name}: raw sends are for stdio framing cases`)
  }

  next(ms: number): Promise<unknown> {
    return this.inbox.next(ms)
  }

  nextReply(ms: number): Promise<unknown> {
    return this.inbox.nextWhere(isReply, ms)
  }

  violations(): Violation[] {
    return this.sniffer.violations
  }

  async dispose(): Promise<void> {
    this.inbox.close()
    await this.target.close()
  }
}
