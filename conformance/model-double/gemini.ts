/**
 * The model double's Gemini API wire (Google's Generative Language API, `v1beta`), for clients
 * that speak only Gemini (gemini-cli through `GOOGLE_GEMINI_BASE_URL`): the plan of play.ts as
 * `GenerateContentResponse`s.
 *
 * - `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` → SSE `data:` chunks, each one
 *   candidate with one part: `!think` as `{text, thought: true}` parts and `!say` as `{text}`
 *   parts in word-sized chunks, each `!call` a whole `{functionCall: {name, args}}` part (Gemini
 *   sends calls whole, without ids), then a last chunk with an empty text part, `finishReason:
 *   "STOP"` and `usageMetadata`. Streaming without `alt=sse` (a JSON array) is refused (400).
 * - `…:generateContent` → one response with every part; `…:countTokens` → `{totalTokens}`;
 *   `GET /v1beta/models` and `/v1beta/models/{model}` → the served models.
 * - Errors use Google's shape `{"error": {"code", "message", "status"}}`, the status from the
 *   code (table below). `!fail` before any output is that HTTP error; after output it is the bare
 *   error object written into the stream (how the API reports a failure mid-stream; the official
 *   SDK raises it as an ApiError), which ends it. The key is `x-goog-api-key` or `?key=`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { tokensFor, type Plan } from '../../server/providers/directives.ts'
import { parseGeminiRequest } from './gemini-input.ts'
import { charsRead, planOrRefuse, playAtOnce, segments, type WireMessage } from './play.ts'
import {
  badRequest,
  failure,
  HttpError,
  openSse,
  readBody,
  sendJson,
  sleep,
  unknownModel,
  type Wire,
  type WireContext,
} from './wire.ts'

/** Google's canonical status for each HTTP code the double sends. */
const STATUSES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'INVALID_ARGUMENT',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}
const statusOf = (code: number): string => STATUSES[code] ?? (code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION')
const errorBody = (e: HttpError) => ({ error: { code: e.status, message: e.message, status: statusOf(e.status) } })

type Part = Record<string, unknown>

function usageMetadata(messages: readonly WireMessage[], plan: Plan) {
  const prompt = tokensFor(charsRead(messages))
  const candidates = tokensFor(plan.written)
  return { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates }
}

const callParts = (plan: Plan): Part[] => plan.calls.map((c) => ({ functionCall: { name: c.tool, args: c.args } }))

function response(model: string, n: number, parts: Part[], last?: Record<string, unknown>) {
  const candidate = { content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }
  return {
    candidates: [candidate],
    ...(last ? { usageMetadata: last } : {}),
    modelVersion: model,
    responseId: `double-${n}`,
  }
}

async function stream(
  res: ServerResponse,
  model: string,
  messages: WireMessage[],
  plan: Plan,
  n: number,
  ctx: WireContext,
): Promise<void> {
  let started = false
  const send = (parts: Part[], last?: Record<string, unknown>): void => {
    if (!started) {
      started = true
      openSse(res)
    }
    res.write(`data: ${JSON.stringify(response(model, n, parts, last))}\r\n\r\n`)
  }
  for (const seg of segments(plan)) {
    if (ctx.signal.aborted) return
    if (seg.kind === 'sleep') {
      if (!(await sleep(seg.ms, ctx.signal))) return
    } else if (seg.kind === 'fail') {
      const err = failure(seg.message)
      if (!started) return sendJson(res, err.status, errorBody(err))
      // Its own write, after what was sent: the SDK reads a chunk that is a bare error object as the failure.
      if (!(await sleep(20, ctx.signal))) return
      res.end(JSON.stringify(errorBody(err)))
      return
    } else for (const text of seg.chunks) send([seg.kind === 'text' ? { text } : { text, thought: true }])
  }
  for (const part of callParts(plan)) send([part])
  send([{ text: '' }], usageMetadata(messages, plan))
  res.end()
}

async function atOnce(
  res: ServerResponse,
  model: string,
  messages: WireMessage[],
  plan: Plan,
  n: number,
  signal: AbortSignal,
): Promise<void> {
  const played = await playAtOnce(plan, signal)
  if (!played) return
  if ('fail' in played) {
    const err = failure(played.fail)
    return sendJson(res, err.status, errorBody(err))
  }
  const parts: Part[] = played.blocks.map((b) =>
    b.kind === 'text' ? { text: b.text } : { text: b.text, thought: true },
  )
  parts.push(...callParts(plan))
  sendJson(res, 200, response(model, n, parts, usageMetadata(messages, plan)))
}

const ROUTE = /^\/v1(?:beta|alpha)\/models(?:\/([^/:]+)(?::([A-Za-z]+))?)?$/

const modelInfo = (id: string) => ({
  name: `models/${id}`,
  version: '001',
  displayName: id,
  description: "The conformance kit's model double",
  inputTokenLimit: 1_048_576,
  outputTokenLimit: 65_536,
  supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  thinking: true,
})

async function handle(req: IncomingMessage, res: ServerResponse, url: URL, ctx: WireContext): Promise<void> {
  const [, model, action] = ROUTE.exec(url.pathname.replace(/\/+$/, '')) ?? []
  if (!action) {
    if (req.method !== 'GET') throw new HttpError(405, `${url.pathname} takes GET`, 'invalid_request_error')
    ctx.record({ models: model ?? true })
    if (model === undefined) return sendJson(res, 200, { models: ctx.models.map(modelInfo) })
    if (!ctx.models.includes(model)) throw unknownModel(model)
    return sendJson(res, 200, modelInfo(model))
  }
  if (req.method !== 'POST') throw new HttpError(405, `${url.pathname} takes POST`, 'invalid_request_error')
  if (!['generateContent', 'streamGenerateContent', 'countTokens'].includes(action))
    throw new HttpError(404, `no method ${action} on models`, 'invalid_request_error')
  const messages = parseGeminiRequest(await readBody(req))
  ctx.record({ model, action, messages })
  if (!ctx.models.includes(model!)) throw unknownModel(model!)
  if (action === 'countTokens') return sendJson(res, 200, { totalTokens: tokensFor(charsRead(messages)) })
  if (action === 'streamGenerateContent' && url.searchParams.get('alt') !== 'sse')
    throw badRequest('the model double streams only server-sent events: add ?alt=sse')
  const plan = planOrRefuse(messages)
  const n = ctx.next()
  if (action === 'streamGenerateContent') await stream(res, model!, messages, plan, n, ctx)
  else await atOnce(res, model!, messages, plan, n, ctx.signal)
}

export const geminiWire: Wire = {
  name: 'gemini',
  serves: (path) => ROUTE.test(path),
  authorized: (req, url, key) => req.headers['x-goog-api-key'] === key || url.searchParams.get('key') === key,
  unauthorized: () => new HttpError(400, 'API key not valid. Please pass a valid API key.', 'invalid_request_error'),
  errorBody,
  handle,
}
