/**
 * The offline model (DESIGN §5): no LLM, fully deterministic; the default provider and the
 * fixture every transcript relies on. It reads the newest user message:
 *
 * | line                          | effect                                                        |
 * |-------------------------------|---------------------------------------------------------------|
 * | `!call <Tool> <json-object>`  | calls that tool; all `!call` lines of a message form one step  |
 * | `!say <text>`                 | replies with exactly `<text>`                                 |
 * | `!think <text>`               | emits `<text>` as reasoning                                   |
 * | `!sleep <ms>`                 | waits that long (cancellable)                                 |
 * | `!fail <message>`             | the provider fails with that message                          |
 * | no directive                  | `offline model: no provider is configured. You said: <msg>`   |
 *
 * First step: directive lines run in the order written (`!say` text and `!think` reasoning
 * stream in word-sized chunks; several `!say` lines are joined by newlines); `!call` lines are
 * issued together when the lines are done; other lines are ignored when the message holds a
 * directive. If tool calls were issued, the next step replies one line per call, in call order
 * — `<Tool> ok: <first line of output>` or `<Tool> error: <message>` — and the turn ends.
 * Usage: ceil(characters read / 4) in, ceil(characters written / 4) out; cost 0.
 */
import type { ChatMessage, ToolCall } from '../../generated/schemas.gen.ts'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../json-depth.ts'
import { ProviderError, type ModelRequest, type Provider, type ProviderEvent } from './types.ts'

export const OFFLINE_MODEL = 'offline'

export type Directive =
  | { kind: 'call'; tool: string; args: Record<string, unknown> }
  | { kind: 'say' | 'think' | 'fail'; text: string }
  | { kind: 'sleep'; ms: number }

const DIRECTIVE = /^!(call|say|think|sleep|fail)(?:\s(.*))?$/

/** The longest `!sleep` (an hour): longer values would overflow the timer and return at once. */
export const MAX_SLEEP_MS = 3_600_000

/** Parse a message's directive lines; throws ProviderError for a malformed one. */
export function parseDirectives(message: string): Directive[] {
  const out: Directive[] = []
  for (const raw of message.split(/\r?\n/)) {
    const m = DIRECTIVE.exec(raw.trimEnd())
    if (!m) continue
    const [, kind, rest = ''] = m
    if (kind === 'call') {
      const cm = /^(\S+)\s*(.*)$/.exec(rest.trim())
      if (!cm) throw new ProviderError('!call needs a tool name: !call <Tool> <json-object>')
      const [, tool, json] = cm as unknown as [string, string, string]
      if (jsonTextDepth(json) > MAX_JSON_DEPTH) throw new ProviderError(`!call ${tool}: arguments are nested deeper than ${MAX_JSON_DEPTH} levels`)
      let args: unknown
      try {
        args = json.trim() === '' ? {} : JSON.parse(json)
      } catch (e) {
        throw new ProviderError(`!call ${tool}: arguments are not valid JSON (${(e as Error).message})`)
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new ProviderError(`!call ${tool}: arguments must be a JSON object`)
      out.push({ kind: 'call', tool, args: args as Record<string, unknown> })
    } else if (kind === 'sleep') {
      const ms = Number(rest.trim())
      if (!/^\d+(\.\d+)?$/.test(rest.trim()) || !Number.isFinite(ms) || ms > MAX_SLEEP_MS) {
        throw new ProviderError(`!sleep needs a number of milliseconds from 0 to ${MAX_SLEEP_MS}, got ${JSON.stringify(rest.trim().slice(0, 40))}`)
      }
      out.push({ kind: 'sleep', ms })
    } else out.push({ kind: kind as 'say' | 'think' | 'fail', text: rest })
  }
  return out
}

/** Word-sized chunks that concatenate back to `text` exactly. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? (text === '' ? [] : [text])
}

const tokens = (chars: number): number => Math.ceil(chars / 4)

function charsRead(messages: ChatMessage[]): number {
  let n = 0
  for (const m of messages) {
    n += m.content.length
    for (const c of m.tool_calls ?? []) n += JSON.stringify(c.args).length
    if (m.tool_result) n += (m.tool_result.output ?? m.tool_result.error ?? '').length
  }
  return n
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** The newest user message and the messages after it. */
function lastUserTurn(messages: ChatMessage[]): { user: ChatMessage | undefined; after: ChatMessage[] } {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return { user: messages[i], after: messages.slice(i + 1) }
  return { user: undefined, after: messages }
}

/** The offline model's context window in tokens (configurable to exercise compaction). */
export const OFFLINE_CONTEXT_WINDOW = 128_000

export class OfflineProvider implements Provider {
  readonly name = 'offline'
  readonly #window: number

  constructor(opts: { contextWindow?: number } = {}) {
    this.#window = opts.contextWindow ?? OFFLINE_CONTEXT_WINDOW
  }

  models(): readonly string[] {
    return [OFFLINE_MODEL]
  }

  accepts(model: string): boolean {
    return this.models().includes(model)
  }

  contextWindow(): number {
    return this.#window
  }

  async *stream(req: ModelRequest): AsyncIterable<ProviderEvent> {
    const { user, after } = lastUserTurn(req.messages)
    const read = charsRead(req.messages)
    let written = 0
    const results = after.filter((m) => m.role === 'tool' && m.tool_result)
    if (results.length > 0) {
      // Second step: one line per call, in call order.
      const lines = results.map((m) => {
        const r = m.tool_result!
        return r.ok ? `${r.tool} ok: ${(r.output ?? '').split('\n')[0]}` : `${r.tool} error: ${r.error ?? 'failed'}`
      })
      const text = lines.join('\n')
      for (const chunk of wordChunks(text)) yield { type: 'text', text: chunk }
      written += text.length
      yield { type: 'usage', input_tokens: tokens(read), output_tokens: tokens(written), cost_usd: 0 }
      yield { type: 'finish', reason: 'end_turn' }
      return
    }
    const message = user?.content ?? ''
    const directives = parseDirectives(message)
    if (directives.length === 0) {
      const text = `offline model: no provider is configured. You said: ${message}`
      for (const chunk of wordChunks(text)) yield { type: 'text', text: chunk }
      yield { type: 'usage', input_tokens: tokens(read), output_tokens: tokens(text.length), cost_usd: 0 }
      yield { type: 'finish', reason: 'end_turn' }
      return
    }
    const calls: ToolCall[] = []
    let said = false
    for (const d of directives) {
      if (req.signal.aborted) throw req.signal.reason
      switch (d.kind) {
        case 'say': {
          const text = said ? `\n${d.text}` : d.text
          said = true
          for (const chunk of wordChunks(text)) yield { type: 'text', text: chunk }
          written += text.length
          break
        }
        case 'think':
          for (const chunk of wordChunks(d.text)) yield { type: 'reasoning', text: chunk }
          written += d.text.length
          break
        case 'sleep':
          await sleep(d.ms, req.signal)
          break
        case 'fail':
          throw new ProviderError(d.text || 'offline model: !fail')
        case 'call':
          calls.push({ call_id: `call_${req.messages.length}_${calls.length + 1}`, tool: d.tool, args: d.args })
          written += d.tool.length + JSON.stringify(d.args).length
          break
      }
    }
    for (const call of calls) {
      yield { type: 'tool_input_start', call_id: call.call_id, tool: call.tool }
      yield { type: 'tool_input_delta', call_id: call.call_id, delta: JSON.stringify(call.args) }
      yield { type: 'tool_call', call }
    }
    yield { type: 'usage', input_tokens: tokens(read), output_tokens: tokens(written), cost_usd: 0 }
    yield { type: 'finish', reason: calls.length ? 'tool_use' : 'end_turn' }
  }
}
