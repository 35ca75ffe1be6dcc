/**
 * The wire sniffer: validates every frame in both directions against the generated validators
 * and records violations. It knows each surface's contract only through generated/ tables:
 * - ACP: the dialect is read off `initialize` (integer protocolVersion 1 → v1 table, else the
 *   seed table); requests, notifications and results are checked against the method table,
 *   error responses against the official schema's Error (v1: any integer code) or, in the seed
 *   dialects, for a code the method (or JSON-RPC itself) declares;
 * - RPC: commands by `type`, outbound messages by their `type` (RpcResponse/StateResponse also
 *   by shape);
 * - HTTP: request bodies and JSON responses per operation and status (or `default`);
 * - SSE: each record's `data:` and `id:`/`retry:` per channel and event name.
 * Frames a transcript sends on purpose as invalid are not checked inbound.
 */
import type { ZodType } from 'zod'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { ErrorSchema as AcpV1ErrorSchema } from '../../generated/acp/v1-schema.gen.ts'
import { negotiate } from '../../server/acp/dialect.ts'
import { acpSeedMethods } from '../../generated/acp/seed.gen.ts'
import { rpcCommands, rpcOutbound } from '../../generated/rpc/jsonl.gen.ts'
import { httpOperations } from '../../generated/http/routes.gen.ts'
import { sseChannels } from '../../generated/sse/events.gen.ts'
import { formatIssues } from '../../client/wire/issues.ts'

export interface Violation {
  dir: 'in' | 'out'
  message: unknown
  problem: string
  /** The spec rule broken: the contract file and the item in it (method, operation, message, event). */
  spec?: string
}

/** The contract files the generated tables come from (for violation reports). */
export const SPEC_FILES = {
  acpV1: 'specs/openrpc/acp-v1.openrpc.json',
  acpV1Schema: 'specs/vendor/acp/schema.v1.json',
  acpSeed: 'specs/openrpc/acp-seed.openrpc.yaml',
  rpc: 'specs/asyncapi/rpc.asyncapi.yaml',
  http: 'specs/openapi/chimera.openapi.yaml',
  sse: 'specs/asyncapi/sse.asyncapi.yaml',
} as const

type Table = Record<string, { direction: string; params: ZodType; result: ZodType | null; errors: readonly number[] }>
const JSONRPC_CODES = [-32700, -32600, -32601, -32602, -32603]
const isObj = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v)

function issues(schema: ZodType, value: unknown): string | undefined {
  const r = schema.safeParse(value)
  return r.success ? undefined : formatIssues(r.error)
}

abstract class Sniffer {
  readonly violations: Violation[] = []
  protected flag(dir: 'in' | 'out', message: unknown, problem: string, spec?: string): void {
    this.violations.push(spec === undefined ? { dir, message, problem } : { dir, message, problem, spec })
  }
  /** `in` = client → server, `out` = server → client. */
  abstract frame(dir: 'in' | 'out', message: unknown, opts?: { invalid?: boolean }): void
}

export class AcpSniffer extends Sniffer {
  #table: Table | undefined
  readonly #pendingIn = new Map<unknown, string>() // client request id → method
  readonly #pendingOut = new Map<unknown, string>() // agent request id → method

  /** The method's spec in the negotiated table (own properties only: `toString` is no method). */
  #spec(method: string): Table[string] | undefined {
    return this.#table && Object.hasOwn(this.#table, method) ? this.#table[method] : undefined
  }

  /** The contract location of a method in the negotiated dialect. */
  #at(method: string | undefined): string {
    const file = this.dialect === 'seed' ? SPEC_FILES.acpSeed : SPEC_FILES.acpV1
    return method ? `${file} methods[${method}]` : file
  }

  get dialect(): 'acp-v1' | 'seed' | undefined {
    return this.#table === undefined ? undefined : this.#table === (acpV1Methods as unknown) ? 'acp-v1' : 'seed'
  }

  frame(dir: 'in' | 'out', m: unknown, opts: { invalid?: boolean } = {}): void {
    if (!isObj(m)) {
      if (dir === 'out') this.flag(dir, m, 'not a JSON object', 'JSON-RPC 2.0 §4 (request object)')
      return
    }
    if (m.jsonrpc !== '2.0' && !(dir === 'in' && opts.invalid))
      this.flag(dir, m, '"jsonrpc" is not "2.0"', 'JSON-RPC 2.0 §4 (jsonrpc member)')
    if (typeof m.method === 'string') {
      if (dir === 'in' && m.method === 'initialize' && isObj(m.params)) {
        // The negotiation rule of docs/decisions/0003, shared with the agent.
        this.#table = (negotiate(m.params) === 'acp-v1' ? acpV1Methods : acpSeedMethods) as unknown as Table
      }
      if ('id' in m) (dir === 'in' ? this.#pendingIn : this.#pendingOut).set(m.id, m.method)
      if (dir === 'in' && opts.invalid) return
      const table =
        this.#table ?? ((m.method === 'initialize' ? acpSeedMethods : undefined) as unknown as Table | undefined)
      const spec = table && Object.hasOwn(table, m.method) ? table[m.method] : undefined
      if (!spec) {
        // ACP v1 reserves names starting with `_` for extension methods: legal on the wire, and a
        // receiver that does not know one ignores the notification or answers Method not found.
        if (this.dialect === 'acp-v1' && m.method.startsWith('_')) return
        if (dir === 'out')
          this.flag(dir, m, `agent sent ${m.method}, which its dialect does not define`, this.#at(undefined))
        return
      }
      const want = dir === 'in' ? ['client-to-agent', 'both'] : ['agent-to-client', 'both']
      if (!want.includes(spec.direction)) this.flag(dir, m, `${m.method} travels ${spec.direction}`, this.#at(m.method))
      const bad = issues(spec.params, m.params ?? {})
      if (bad) this.flag(dir, m, `params of ${m.method}: ${bad}`, this.#at(m.method))
      return
    }
    // A response.
    const pending = dir === 'out' ? this.#pendingIn : this.#pendingOut
    const method = pending.get(m.id)
    pending.delete(m.id)
    if ('error' in m) {
      const e = m.error
      if (!isObj(e) || !Number.isInteger(e.code) || typeof e.message !== 'string')
        return this.flag(dir, m, 'error is not {code:int, message:string}', 'JSON-RPC 2.0 §5.1 (error object)')
      // ACP v1: the official schema's Error, whose ErrorCode admits any integer besides the
      // predefined codes ("Other undefined error code"); the seed dialects declare theirs per method.
      if (this.dialect === 'acp-v1') {
        const bad = issues(AcpV1ErrorSchema, e)
        if (bad)
          this.flag(dir, m, `error of ${method ?? 'this message'}: ${bad}`, `${SPEC_FILES.acpV1Schema} $defs.Error`)
        return
      }
      const spec = method ? this.#spec(method) : undefined
      const allowed = [...JSONRPC_CODES, ...(spec?.errors ?? [])]
      if (!allowed.includes(e.code))
        this.flag(dir, m, `error code ${e.code} is not declared for ${method ?? 'this message'}`, this.#at(method))
      return
    }
    if (!method) {
      if (dir === 'out')
        this.flag(dir, m, `response to unknown request id ${JSON.stringify(m.id)}`, 'JSON-RPC 2.0 §5 (response id)')
      return
    }
    const spec = this.#spec(method)
    if (spec?.result) {
      const bad = issues(spec.result, m.result)
      if (bad) this.flag(dir, m, `result of ${method}: ${bad}`, this.#at(method))
    }
  }
}

export class RpcSniffer extends Sniffer {
  frame(dir: 'in' | 'out', m: unknown, opts: { invalid?: boolean } = {}): void {
    if (dir === 'in') {
      if (opts.invalid) return
      if (!isObj(m) || typeof m.type !== 'string' || !(m.type in rpcCommands))
        return this.flag(dir, m, 'not a known command', `${SPEC_FILES.rpc} channels.stdin`)
      const bad = issues(rpcCommands[m.type as keyof typeof rpcCommands].schema, m)
      if (bad) this.flag(dir, m, `command ${m.type}: ${bad}`, `${SPEC_FILES.rpc} channels.stdin.messages.${m.type}`)
      return
    }
    if (!isObj(m)) return this.flag(dir, m, 'not a JSON object', `${SPEC_FILES.rpc} channels.stdout`)
    const entry =
      Object.entries(rpcOutbound).find(([, o]) => o.type !== null && o.type === m.type) ??
      (m.type === undefined && 'command' in m ? (['RpcResponse', rpcOutbound.RpcResponse] as const) : undefined) ??
      (m.type === undefined && 'messages' in m ? (['StateResponse', rpcOutbound.StateResponse] as const) : undefined)
    if (!entry)
      return this.flag(
        dir,
        m,
        `unknown outbound message type ${JSON.stringify(m.type)}`,
        `${SPEC_FILES.rpc} channels.stdout`,
      )
    const bad = issues(entry[1].schema, m)
    if (bad) this.flag(dir, m, `${entry[0]}: ${bad}`, `${SPEC_FILES.rpc} channels.stdout.messages.${entry[0]}`)
  }
}

type Op = (typeof httpOperations)[keyof typeof httpOperations]
const routeRegex = (path: string): RegExp =>
  new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}$`)
const OPS = (Object.values(httpOperations) as Op[]).map((op) => ({ op, re: routeRegex(op.path) }))

/** The spec operation for a method and path, if any. */
export function findOperation(method: string, pathname: string): Op | undefined {
  return OPS.find((o) => o.op.method === method && o.re.test(pathname))?.op
}

export interface HttpExchange {
  method: string
  path: string
  requestBody?: unknown
  status: number
  contentType: string | null
  body: unknown
}

/** `/` (a redirect to `/ui`), `/ui…` and `/docs…`: server/http/ui.ts and server/http/docs.ts. */
const BROWSER_PAGES = /^\/(?:$|ui(?:\/|$)|docs(?:\/|$))/

export class HttpSniffer extends Sniffer {
  frame(): void {
    throw new Error('HttpSniffer checks whole exchanges: use exchange()')
  }

  exchange(x: HttpExchange, opts: { invalid?: boolean } = {}): void {
    const pathname = new URL(x.path, 'http://x').pathname
    if (x.method === 'OPTIONS' && x.status === 204) return // CORS preflight: transport plumbing, outside the API contract
    // The pages for people beside the API (the console, the reference, `/` leading to the console): outside the API document.
    if (BROWSER_PAGES.test(pathname) && (x.method === 'GET' || x.method === 'HEAD') && x.status < 400) return
    const op = findOperation(x.method, pathname)
    if (!op) {
      if (x.status !== 404 && x.status !== 405)
        this.flag(
          'out',
          x,
          `no spec operation for ${x.method} ${pathname}, yet status ${x.status}`,
          `${SPEC_FILES.http} paths`,
        )
      return this.#checkError(x)
    }
    if (!opts.invalid && op.body && x.requestBody !== undefined) {
      const bad = issues(op.body.schema, x.requestBody)
      if (bad)
        this.flag(
          'in',
          x.requestBody,
          `request body of ${op.operationId}: ${bad}`,
          `${SPEC_FILES.http} operationId ${op.operationId} requestBody`,
        )
    }
    const at = (status: string) => `${SPEC_FILES.http} operationId ${op.operationId} responses.${status}`
    const responses = op.responses as Record<string, Record<string, ZodType | null>>
    const key = String(x.status) in responses ? String(x.status) : 'default'
    const res = responses[key]
    if (!res)
      return this.flag(
        'out',
        x,
        `${op.operationId} does not declare status ${x.status}`,
        `${SPEC_FILES.http} operationId ${op.operationId} responses`,
      )
    const type = (x.contentType ?? '').split(';')[0]!.trim()
    if (x.status === 204 || Object.keys(res).length === 0) {
      if (x.body !== undefined && x.body !== '')
        this.flag('out', x, `${op.operationId} ${x.status} must have no body`, at(key))
      return
    }
    if (!(type in res))
      return this.flag(
        'out',
        x,
        `${op.operationId} ${x.status} is not declared as ${type || 'no content type'}`,
        at(key),
      )
    const schema = res[type]
    if (schema) {
      const bad = issues(schema, x.body)
      if (bad) this.flag('out', x.body, `${op.operationId} ${x.status} body: ${bad}`, at(key))
    }
  }

  #checkError(x: HttpExchange): void {
    if (!isObj(x.body) || typeof x.body.error !== 'string')
      this.flag('out', x, 'error response lacks the ErrorBody shape', `${SPEC_FILES.http} components.schemas.ErrorBody`)
  }
}

export interface SseRecord {
  id?: string
  event?: string
  data: string
  retry?: number
}

export class SseSniffer extends Sniffer {
  readonly #channel: keyof typeof sseChannels | undefined
  constructor(path: string) {
    super()
    const pathname = new URL(path, 'http://x').pathname
    this.#channel = (Object.keys(sseChannels) as (keyof typeof sseChannels)[]).find((c) =>
      routeRegex(sseChannels[c].address).test(pathname),
    )
  }

  frame(dir: 'in' | 'out', rec: unknown): void {
    if (dir !== 'out') return
    if (!this.#channel)
      return this.flag(dir, rec, 'no SSE channel in the spec for this path', `${SPEC_FILES.sse} channels`)
    const r = rec as SseRecord
    const events = sseChannels[this.#channel].events as Record<string, { payload: ZodType; headers: ZodType | null }>
    const name = r.event ?? 'message'
    const at = `${SPEC_FILES.sse} channels.${this.#channel}.messages.${name}`
    const def = Object.hasOwn(events, name) ? events[name] : undefined
    if (!def)
      return this.flag(
        dir,
        rec,
        `event ${JSON.stringify(r.event)} is not defined on ${this.#channel}`,
        `${SPEC_FILES.sse} channels.${this.#channel}.messages`,
      )
    let data: unknown
    try {
      data = JSON.parse(r.data)
    } catch {
      return this.flag(dir, rec, 'data is not JSON', at)
    }
    const bad = issues(def.payload, data)
    if (bad) this.flag(dir, rec, `${r.event} data: ${bad}`, at)
    // On the plural stream the event name is the canonical type the payload carries.
    const type = (data as { type?: unknown })?.type
    if (this.#channel === 'sessionsEvents' && r.event !== 'end' && type !== r.event)
      this.flag(dir, rec, `event ${JSON.stringify(r.event)} carries data.type ${JSON.stringify(type)}`, at)
    const headers: Record<string, string> = {}
    if (r.id !== undefined) headers.id = r.id
    if (r.retry !== undefined) headers.retry = String(r.retry)
    if (def.headers) {
      const badH = issues(def.headers, headers)
      if (badH) this.flag(dir, rec, `${r.event} frame: ${badH}`, `${at} headers`)
    }
  }
}
