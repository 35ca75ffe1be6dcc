/**
 * The same directive scripts through a real Session twice — on the offline model, and on the
 * OpenAI-compatible provider talking to the model double over a loopback socket — give the
 * same canonical event streams: the same event types in the same order, the same text and
 * reasoning per step (chunking aside: the core coalesces chunks), the same tool calls, tool
 * results, stop reasons and output token counts. Ids, timestamps, durations, input token
 * counts and cost (0 offline, null for an unpriced server) are not compared; an error's
 * message is the offline one behind the provider's explanation.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { AnyEvent } from '../../server/events/event-types.ts'
import { testEnv, within, type TestEnv } from '../../server/core/fixtures/harness.ts'
import { recordedRetry } from '../../server/providers/fixtures/provider-harness.ts'
import { buildModelRegistry } from '../../server/providers/registry.ts'
import { DOUBLE_MODEL, startModelDouble, type ModelDouble } from './server.ts'

export const SCRIPTS = [
  '!say hello world, how are you?',
  '!think weighing the options\n!say the answer is 42',
  '!say reading files\n!call Read {"path":"notes.txt"}\n!call Read {"path":"missing.txt"}\n!call Glob {"pattern":"*.txt"}',
  'no directive here',
  '!say partial\n!fail boom',
  '!fail out of tokens',
]

type Canonical = Record<string, unknown>

/** One comparable record per event, runs of streamed chunks joined into one. */
export function canonical(events: readonly AnyEvent[]): Canonical[] {
  const out: Canonical[] = []
  for (const e of events) {
    const d = e.data as Record<string, unknown>
    const prev = out.at(-1)
    if ((e.type === 'text_delta' || e.type === 'reasoning') && prev?.type === e.type && prev.step === d.step) {
      prev.text = `${prev.text as string}${d.text as string}`
      continue
    }
    switch (e.type) {
      case 'user_message':
        out.push({ type: e.type, text: d.text })
        break
      case 'turn_start':
        out.push({ type: e.type, prompt: d.prompt })
        break
      case 'step_start':
        out.push({ type: e.type, step: d.step })
        break
      case 'text_delta':
      case 'reasoning':
        out.push({ type: e.type, step: d.step, text: d.text })
        break
      case 'usage':
        out.push({ type: e.type, output_tokens: (d.usage as { output_tokens: number }).output_tokens })
        break
      case 'tool_call':
      case 'tool_start':
        out.push({ type: e.type, tool: d.tool, args: d.args })
        break
      case 'tool_result':
        out.push({ type: e.type, tool: d.tool, ok: d.ok, output: d.output, error: d.error })
        break
      case 'step_end':
      case 'turn_end':
        out.push({ type: e.type, stop_reason: d.stop_reason, ...(d.steps !== undefined ? { steps: d.steps } : {}) })
        break
      case 'agent_result':
        out.push({
          type: e.type,
          success: d.success,
          output: d.output,
          steps: d.steps,
          output_tokens: (d.usage as { output_tokens: number }).output_tokens,
        })
        break
      case 'error':
        out.push({ type: e.type, source: d.source })
        break
      default:
        out.push({ type: e.type })
    }
  }
  return out
}

let double: ModelDouble
let env: TestEnv
beforeAll(async () => {
  double = await startModelDouble()
})
afterAll(async () => {
  await double.close()
})
beforeEach(() => {
  env = testEnv('chimera-equivalence-')
  writeFileSync(join(env.cwd, 'notes.txt'), 'first note\nsecond note\n')
})
afterEach(async () => {
  await env.cleanup()
})

/** Run every script as one turn of one session on `model`; the session's events. */
async function runScripts(model: string, registry: ReturnType<typeof buildModelRegistry>): Promise<AnyEvent[]> {
  const session = await env.manager({ models: registry, model }).create()
  for (const script of SCRIPTS) await within(session.prompt(script).done, 15_000, `the turn ${JSON.stringify(script)}`)
  return session.events()
}

describe('the model double plays the offline model', () => {
  it('the same scripts give the same canonical event streams through a real Session', async () => {
    const offline = await runScripts('offline', buildModelRegistry({}))
    const compatModel = `openai-compatible/${DOUBLE_MODEL}`
    const viaDouble = await runScripts(
      compatModel,
      buildModelRegistry({ CHIMERA_OPENAI_BASE_URL: double.url }, { model: compatModel, retry: recordedRetry() }),
    )

    const a = canonical(offline)
    const b = canonical(viaDouble)
    expect(b.map((r) => r.type)).toEqual(a.map((r) => r.type))
    expect(b).toEqual(a)

    // Errors: the offline message, behind the provider's explanation of where it came from.
    const errors = (events: AnyEvent[]) =>
      events.filter((e) => e.type === 'error').map((e) => (e.data as { message: string }).message)
    expect(errors(offline)).toEqual(['boom', 'out of tokens'])
    expect(errors(viaDouble)).toEqual([
      'openai-compatible: the model reported an error: boom',
      'openai-compatible: server error (HTTP 500) after 4 attempts: out of tokens',
    ])

    // The streams hold what the scripts asked for (so equality is not two empty lists).
    const types = new Set(a.map((r) => r.type))
    for (const t of ['text_delta', 'reasoning', 'tool_call', 'tool_result', 'usage', 'agent_result', 'error'])
      expect(types.has(t)).toBe(true)
    expect(a.filter((r) => r.type === 'tool_result').map((r) => r.ok)).toEqual([true, false, true])
    expect(a.find((r) => r.type === 'agent_result' && (r.output as string).startsWith('Read ok:'))).toMatchObject({
      output: 'Read ok:      1\tfirst note\nRead error: file not found: missing.txt\nGlob ok: notes.txt',
    })

    // Usage: counted on both; cost 0 offline, null (unknown) for the unpriced server.
    const costs = (events: AnyEvent[]) =>
      events
        .filter((e) => e.type === 'usage')
        .map((e) => (e.data as { usage: { cost_usd: number | null } }).usage.cost_usd)
    expect(new Set(costs(offline))).toEqual(new Set([0]))
    expect(new Set(costs(viaDouble))).toEqual(new Set([null]))
  })
})
