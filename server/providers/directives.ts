/**
 * The directive language of the offline model (docs/providers.md), as a plan independent of any wire:
 * the offline provider streams a plan as ProviderEvents, the conformance kit's model double
 * (conformance/model-double/) streams the same plan as OpenAI chat-completion chunks. Both
 * play one parser and one set of rules, so the same transcript means the same thing to both.
 */
import { ProviderError } from './types.ts'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../json-depth.ts'

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
      if (jsonTextDepth(json) > MAX_JSON_DEPTH)
        throw new ProviderError(`!call ${tool}: arguments are nested deeper than ${MAX_JSON_DEPTH} levels`)
      let args: unknown
      try {
        args = json.trim() === '' ? {} : JSON.parse(json)
      } catch (e) {
        throw new ProviderError(`!call ${tool}: arguments are not valid JSON (${(e as Error).message})`)
      }
      if (typeof args !== 'object' || args === null || Array.isArray(args))
        throw new ProviderError(`!call ${tool}: arguments must be a JSON object`)
      out.push({ kind: 'call', tool, args: args as Record<string, unknown> })
    } else if (kind === 'sleep') {
      const ms = Number(rest.trim())
      if (!/^\d+(\.\d+)?$/.test(rest.trim()) || !Number.isFinite(ms) || ms > MAX_SLEEP_MS) {
        throw new ProviderError(
          `!sleep needs a number of milliseconds from 0 to ${MAX_SLEEP_MS}, got ${JSON.stringify(rest.trim().slice(0, 40))}`,
        )
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

/** One move of a first step, in the order the directive lines were written. */
export type Move =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'sleep'; ms: number }
  | { kind: 'fail'; message: string }

export interface Plan {
  moves: Move[]
  /** The `!call` lines, issued together when the moves are done. */
  calls: { tool: string; args: Record<string, unknown> }[]
  /** Characters the model writes (its usage: ceil(chars / 4) output tokens). */
  written: number
}

/** The reply to a message without directives. */
export const plainReply = (message: string): string => `offline model: no provider is configured. You said: ${message}`

/**
 * The first step for the newest user message. Several `!say` lines are joined by newlines;
 * a message without directives gets the plain reply. Throws ProviderError for a malformed line.
 */
export function planFirstStep(message: string): Plan {
  const directives = parseDirectives(message)
  if (directives.length === 0) {
    const text = plainReply(message)
    return { moves: [{ kind: 'text', text }], calls: [], written: text.length }
  }
  const plan: Plan = { moves: [], calls: [], written: 0 }
  let said = false
  for (const d of directives) {
    switch (d.kind) {
      case 'say': {
        const text = said ? `\n${d.text}` : d.text
        said = true
        plan.moves.push({ kind: 'text', text })
        plan.written += text.length
        break
      }
      case 'think':
        plan.moves.push({ kind: 'reasoning', text: d.text })
        plan.written += d.text.length
        break
      case 'sleep':
        plan.moves.push({ kind: 'sleep', ms: d.ms })
        break
      case 'fail':
        plan.moves.push({ kind: 'fail', message: d.text || 'offline model: !fail' })
        break
      case 'call':
        plan.calls.push({ tool: d.tool, args: d.args })
        plan.written += d.tool.length + JSON.stringify(d.args).length
        break
    }
  }
  return plan
}

/** One tool result as the second step sees it. */
export interface ResultSeen {
  tool: string
  ok: boolean
  /** The output (ok) or the error message. */
  text: string
}

/** The second step: one line per call, in call order. */
export function resultsReply(results: readonly ResultSeen[]): string {
  return results
    .map((r) => (r.ok ? `${r.tool} ok: ${r.text.split('\n')[0]}` : `${r.tool} error: ${r.text || 'failed'}`))
    .join('\n')
}

/** Usage tokens for a character count: ceil(chars / 4). */
export const tokensFor = (chars: number): number => Math.ceil(chars / 4)
