/**
 * Real providers inside a real Session: usage per step (the `usage` event, with cache and
 * context window) and per turn (agent_result.usage, summed by the core) and in the session
 * summary, priced for a known model and null for an unpriced one — a null that stays null
 * as turns add up; the context window of the model driving automatic compaction; and the
 * failure cases run with recognisable fake keys, which appear in no event (live or on disk),
 * no log line and no error message, while each failure is an `error` event and the session
 * goes on to its next turn.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { http, HttpResponse } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startModelDouble, type ModelDouble } from '../../conformance/model-double/server.ts'
import { ofType, testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import type { AnyEvent } from '../events/event-types.ts'
import { capturingLogger, fixture, recordedRetry, sseEvents, sseResponse } from './fixtures/provider-harness.ts'
import { buildModelRegistry } from './registry.ts'

const server = setupServer()
let double: ModelDouble
let env: TestEnv
beforeAll(async () => {
  server.listen({
    onUnhandledRequest: (request, print) =>
      void (new URL(request.url).hostname === '127.0.0.1' ? undefined : print.error()),
  })
  double = await startModelDouble({ apiKey: 'double-side-key' })
})
afterAll(async () => {
  server.close()
  await double.close()
})
beforeEach(() => {
  env = testEnv('chimera-providers-')
})
afterEach(async () => {
  server.resetHandlers()
  await env.cleanup()
})

/** Every file under `dir`, concatenated (the persisted event log and summaries). */
function filesUnder(dir: string): string {
  let all = ''
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name)
    if (statSync(p).isFile()) all += readFileSync(p, 'utf8')
  }
  return all
}

const usageOf = (e: AnyEvent) => (e.data as { usage: Record<string, unknown> }).usage

describe('usage and cost through a session', () => {
  it('a priced model (Anthropic): per-step usage with cache tokens and context window, the turn sum, and the summary', async () => {
    const replies = [fixture('anthropic-thinking-tool.sse'), fixture('anthropic-text.sse')]
    const bodies: { messages: { role: string; content: { type: string }[] }[] }[] = []
    server.use(
      http.post('https://api.anthropic.com/v1/messages', async ({ request }) => {
        bodies.push((await request.json()) as (typeof bodies)[number])
        return sseResponse(sseEvents(replies[bodies.length - 1]!))
      }),
    )
    const models = buildModelRegistry({ ANTHROPIC_API_KEY: 'sk-ant-usage-test' }, { retry: recordedRetry() })
    const session = await env.manager({ models }).create()
    expect(session.model).toBe('anthropic/claude-sonnet-4-5')
    const outcome = await within(session.prompt('What does the README say?').done, 10_000, 'the turn')
    expect(outcome).toMatchObject({ stop_reason: 'end_turn', output: 'The README says hello.' })
    const events = await session.events()
    const steps = ofType(events, 'usage')
    const step1 = (472 * 3 + 89 * 15 + 2048 * 0.3 + 1024 * 3.75) / 1e6
    const step2 = (1210 * 3 + 12 * 15 + 3072 * 0.3) / 1e6
    expect(steps.map((e) => e.data)).toEqual([
      {
        usage: {
          input_tokens: 472,
          output_tokens: 89,
          cache_read_tokens: 2048,
          cache_write_tokens: 1024,
          cache_tokens: 3072,
          total_tokens: 472 + 89 + 3072,
          cost_usd: Number(step1.toFixed(9)),
        },
        context_window: 200_000,
      },
      {
        usage: {
          input_tokens: 1210,
          output_tokens: 12,
          cache_read_tokens: 3072,
          cache_write_tokens: 0,
          cache_tokens: 3072,
          total_tokens: 1210 + 12 + 3072,
          cost_usd: Number(step2.toFixed(9)),
        },
        context_window: 200_000,
      },
    ])
    const turn = ofType(events, 'agent_result')[0]!.data.usage!
    expect(turn).toMatchObject({
      input_tokens: 1682,
      output_tokens: 101,
      cache_read_tokens: 5120,
      cache_write_tokens: 1024,
      cache_tokens: 6144,
    })
    expect(turn.cost_usd).toBeCloseTo(step1 + step2, 9)
    expect(session.summary.usage).toMatchObject({
      input_tokens: 1682,
      output_tokens: 101,
      cache_read_tokens: 5120,
      cache_write_tokens: 1024,
    })
    expect(session.summary.cost_usd).toBeCloseTo(step1 + step2, 9)
    // The thinking block is kept signed in the history and went back with the second call.
    const signed = {
      text: 'The user wants the README. I will read it.',
      signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
    }
    expect(session.messages().find((m) => m.role === 'assistant')?.reasoning).toEqual([signed])
    expect(bodies[1]!.messages[1]!.content[0]).toEqual({
      type: 'thinking',
      thinking: signed.text,
      signature: signed.signature,
    })
  })

  it('an unpriced model: tokens counted, cost null per step, per turn and in the summary, and it stays null', async () => {
    const model = 'openai-compatible/chimera-double'
    const models = buildModelRegistry(
      { CHIMERA_OPENAI_BASE_URL: double.url, CHIMERA_OPENAI_API_KEY: 'double-side-key' },
      { model, retry: recordedRetry() },
    )
    const session = await env.manager({ models, model }).create()
    await within(session.prompt('!say one two three').done, 10_000, 'turn 1')
    await session.setModel('offline')
    await within(session.prompt('!say priced at zero').done, 10_000, 'turn 2')
    const events = await session.events()
    const results = ofType(events, 'agent_result').map((e) => e.data.usage)
    expect(results[0]).toMatchObject({ output_tokens: Math.ceil('one two three'.length / 4), cost_usd: null })
    expect(results[0]!.input_tokens).toBeGreaterThan(0)
    // (The offline turn's agent_result derives its usage from the session's running total, so
    // its cost reads null too; its own step below says 0.)
    expect(results[1]!.output_tokens).toBe(Math.ceil('priced at zero'.length / 4))
    // The session's total is unknown once any part of it is: null, not the known part.
    expect(session.summary.usage?.cost_usd).toBeNull()
    expect(session.summary.usage?.output_tokens).toBe(results[0]!.output_tokens + results[1]!.output_tokens)
    // The flat summary field stays a number ("at least this much"), as state.ts documents.
    expect(session.summary.cost_usd).toBe(0)
    expect(ofType(events, 'usage').map((e) => usageOf(e).cost_usd)).toEqual([null, 0])
  })

  it("the model's context window drives automatic compaction, and the summary reaches the server as a system message", async () => {
    const model = 'openai-compatible/chimera-double'
    const models = buildModelRegistry(
      {
        CHIMERA_OPENAI_BASE_URL: double.url,
        CHIMERA_OPENAI_API_KEY: 'double-side-key',
        CHIMERA_OPENAI_CONTEXT_WINDOW: '1024',
      },
      { model, retry: recordedRetry() },
    )
    const session = await env.manager({ models, model }).create()
    await within(session.prompt(`!say ${'many words '.repeat(400)}`).done, 10_000, 'a long turn')
    double.requests.length = 0
    await within(session.prompt('!say short').done, 10_000, 'the next turn')
    const events = await session.events()
    expect(ofType(events, 'usage').at(-1)!.data.context_window).toBe(1024)
    expect(ofType(events, 'compaction')).toHaveLength(1)
    const sent = (double.requests[0]!.body as { messages: { role: string }[] }).messages
    expect(sent[0]!.role).toBe('system')
    expect(sent.at(-1)).toEqual({ role: 'user', content: '!say short' })
  })
})

describe('provider keys never leak', () => {
  const KEYS = {
    ANTHROPIC_API_KEY: 'sk-ant-LEAKCHECK-a1b2c3d4e5',
    OPENAI_API_KEY: 'sk-proj-LEAKCHECK-f6a7b8c9d0',
    CHIMERA_OPENAI_API_KEY: 'LEAKCHECK-compat-1122334455',
  }

  it('failures with fake keys: an error event each, the session goes on, and no key in events, files, logs or messages', async () => {
    let anthropicCalls = 0
    server.use(
      http.post('https://api.anthropic.com/v1/messages', () => {
        anthropicCalls++
        if (anthropicCalls === 1)
          return HttpResponse.json(
            {
              type: 'error',
              error: { type: 'authentication_error', message: `invalid x-api-key: ${KEYS.ANTHROPIC_API_KEY}` },
            },
            { status: 401 },
          )
        if (anthropicCalls === 2)
          return HttpResponse.json(
            { type: 'error', error: { type: 'api_error', message: `echo ${KEYS.ANTHROPIC_API_KEY}` } },
            { status: 500 },
          )
        if (anthropicCalls <= 5)
          return HttpResponse.json(
            { type: 'error', error: { type: 'api_error', message: 'still failing' } },
            { status: 500 },
          )
        return sseResponse(sseEvents(fixture('anthropic-text.sse')), { cutAfter: 2 })
      }),
      http.post('https://api.openai.com/v1/responses', () =>
        HttpResponse.json(
          {
            error: {
              message: `Incorrect API key provided: ${KEYS.OPENAI_API_KEY}`,
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          },
          { status: 401 },
        ),
      ),
    )
    const logger = capturingLogger()
    const runs: { model: string; prompts: string[] }[] = [
      {
        model: 'anthropic/claude-sonnet-4-5',
        prompts: ['first (401)', 'second (500, retried)', 'third (cut mid-stream)'],
      },
      { model: 'openai/gpt-4o', prompts: ['401 with the key echoed'] },
      { model: 'openai-compatible/chimera-double', prompts: ['!say wrong key: 401'] },
    ]
    const errors: string[] = []
    let all = ''
    for (const run of runs) {
      const models = buildModelRegistry(
        { ...KEYS, CHIMERA_OPENAI_BASE_URL: double.url },
        { model: run.model, logger, retry: recordedRetry() },
      )
      const session = await env.manager({ models, model: run.model, logger }).create()
      for (const p of run.prompts) {
        const outcome = await within(session.prompt(p).done, 10_000, p)
        expect(outcome.stop_reason).toBe('error')
        errors.push(outcome.output)
      }
      const events = await session.events()
      expect(ofType(events, 'error')).toHaveLength(run.prompts.length)
      all += JSON.stringify(events)
    }
    expect(errors).toEqual([
      'anthropic: https://api.anthropic.com/v1 refused the credentials (HTTP 401); check ANTHROPIC_API_KEY',
      'anthropic: server error (HTTP 500) after 4 attempts: still failing',
      'anthropic: the response stream was cut off (UND_ERR_SOCKET)',
      'openai: https://api.openai.com/v1 refused the credentials (HTTP 401); check OPENAI_API_KEY',
      `openai-compatible: ${double.url} refused the credentials (HTTP 401); check CHIMERA_OPENAI_API_KEY`,
    ])
    all += errors.join('\n') + logger.lines.join('') + filesUnder(env.home)
    expect(logger.lines.some((l) => l.includes('retrying in'))).toBe(true)
    expect(all).toContain('refused the credentials')
    for (const key of Object.values(KEYS)) expect(all).not.toContain(key)
    expect(all).not.toContain('LEAKCHECK')
  })
})
