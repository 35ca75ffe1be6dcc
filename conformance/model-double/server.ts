/**
 * The model double: an HTTP server on loopback that plays the offline model's directive
 * language (docs/providers.md; docs/providers.md) on four model APIs, so an implementation built on any
 * of them is driven by the same transcripts. Hand-written on node:http
 * (docs/decisions/0041-model-double-on-node-http.md): the double must control the wire byte by
 * byte — when headers go out, each SSE chunk, a failure before or after the first byte. One
 * module per wire, one plan (play.ts), shared plumbing (wire.ts):
 *
 * - OpenAI (chat.ts): `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/responses`
 *   (responses.ts, for Responses-only clients such as Codex); bearer key.
 * - Anthropic Messages (anthropic.ts): `POST /v1/messages` (+ `/count_tokens`), `GET
 *   /v1/models` with an `anthropic-version` header; `x-api-key`.
 * - Gemini (gemini.ts): `POST /v1beta/models/{model}:generateContent`,
 *   `:streamGenerateContent?alt=sse`, `:countTokens`, `GET /v1beta/models`; `x-goog-api-key`
 *   or `?key=`.
 *
 * On every wire `!sleep` waits (ended when the client goes away) and `!fail` before anything
 * was streamed is an HTTP error (500, or the status its message starts with, e.g. `!fail 429
 * slow down`, sent with `retry-after: 1`); after output it is the wire's own in-stream failure.
 * Each wire words errors in its API's shape: an unknown model is 404, a bad body 400, a missing
 * or wrong key (when the double was started with one) the API's refusal; an unknown path is
 * 404 in OpenAI's shape.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { anthropicWire } from './anthropic.ts'
import { openaiWire } from './chat.ts'
import { geminiWire } from './gemini.ts'
import { HttpError, sendJson, type Wire, type WireContext } from './wire.ts'

/** Each request goes to the first wire that serves its path (Anthropic's model list is told apart by its header). */
const WIRES: readonly Wire[] = [anthropicWire, geminiWire, openaiWire]

export interface ModelDoubleOptions {
  host?: string
  /** 0 (default): any free port. */
  port?: number
  /** Model ids served (default `chimera-double`). */
  models?: readonly string[]
  /** When set, requests must carry it the way their API sends a key (bearer, `x-api-key`, `x-goog-api-key`). */
  apiKey?: string
  /** Characters per tool-call argument chunk (default 7). */
  argumentChunk?: number
}

export interface ModelDouble {
  /** OpenAI base URL, e.g. `http://127.0.0.1:41234/v1`. */
  url: string
  /** The server's origin, e.g. `http://127.0.0.1:41234` (Anthropic and Gemini clients add their own path). */
  origin: string
  /** Requests served so far (by path), for tests. */
  readonly requests: { method: string; path: string; body?: unknown }[]
  close(): Promise<void>
}

export const DOUBLE_MODEL = 'chimera-double'

export async function startModelDouble(opts: ModelDoubleOptions = {}): Promise<ModelDouble> {
  const models = opts.models ?? [DOUBLE_MODEL]
  const argChunk = Math.max(1, opts.argumentChunk ?? 7)
  const requests: ModelDouble['requests'] = []
  let counter = 0

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://double')
    const path = url.pathname.replace(/\/+$/, '')
    const method = req.method ?? 'GET'
    const wire = WIRES.find((w) => w.serves(path, req))
    const ac = new AbortController()
    res.on('close', () => ac.abort())
    try {
      if (!wire) throw new HttpError(404, `no route for ${method} ${path || '/'}`, 'invalid_request_error', 'not_found')
      if (opts.apiKey !== undefined && !wire.authorized(req, url, opts.apiKey)) throw wire.unauthorized()
      const ctx: WireContext = {
        models,
        argChunk,
        signal: ac.signal,
        next: () => ++counter,
        record: (body) => requests.push({ method, path, body }),
      }
      await wire.handle(req, res, url, ctx)
    } catch (e) {
      const err = e instanceof HttpError ? e : new HttpError(500, 'internal error in the model double', 'server_error')
      if (err.status === 413) {
        // Answer, then drop the connection rather than read the rest of an oversized body.
        res.setHeader('connection', 'close')
        res.on('finish', () => req.destroy())
      }
      if (!res.headersSent) sendJson(res, err.status, (wire ?? openaiWire).errorBody(err))
      else res.destroy()
    }
  }

  const server: Server = createServer((req, res) => void handle(req, res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const addr = server.address() as AddressInfo
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  return {
    url: `http://${host}:${addr.port}/v1`,
    origin: `http://${host}:${addr.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
