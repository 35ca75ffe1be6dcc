/**
 * The update_plan tool in a real session: the offline model calls it like any tool; the plan
 * is published as one `plan` event (defaults filled in, before the call's result), it runs
 * without a permission request even when every ask-tool would be asked, the model gets a
 * summary back, it is offered in plan mode, and every wire shows it (JSON-lines PlanEvent,
 * SSE envelope, transcripts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { rpcOutbound } from '../../generated/rpc/jsonl.gen.ts'
import { SseEnvelopeSchema } from '../../generated/schemas.gen.ts'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { toRpcMessages } from '../rpc/event-map.ts'
import { pluralRecord } from '../http/sse/event-map.ts'
import { renderHtml } from '../share/transcript-html.ts'
import { renderMarkdown } from '../share/transcript-md.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-plan-')
})
afterEach(async () => {
  await env.cleanup()
})

const PLAN = {
  entries: [
    { content: 'read the code', status: 'completed', priority: 'high' },
    { content: 'fix the <bug>', status: 'in_progress' },
    { content: 'run tests', status: 'pending', priority: 'low' },
  ],
}

describe('update_plan', () => {
  it('publishes the complete plan as a plan event without asking, and tells the model', async () => {
    const session = await env.manager({ approval: 'ask' }).create()
    await within(session.prompt(`!call update_plan ${JSON.stringify(PLAN)}`).done, 8000, 'the turn')
    const events = await session.events()
    const types = events.map((e) => e.type)
    expect(types).not.toContain('permission_request')
    const plan = events.find((e) => e.type === 'plan')
    const call = events.find((e) => e.type === 'tool_call')!
    expect(plan?.data).toEqual({
      call_id: (call.data as { call_id: string }).call_id,
      entries: [
        { content: 'read the code', priority: 'high', status: 'completed' },
        { content: 'fix the <bug>', priority: 'medium', status: 'in_progress' },
        { content: 'run tests', priority: 'low', status: 'pending' },
      ],
    })
    expect(types.indexOf('plan')).toBeLessThan(types.indexOf('tool_result'))
    const result = events.find((e) => e.type === 'tool_result')!.data as { ok: boolean; output: string }
    expect(result).toMatchObject({
      ok: true,
      output: 'plan updated: 1/3 completed\n[x] read the code\n[~] fix the <bug>\n[ ] run tests',
    })
    expect(events.at(-1)).toMatchObject({
      type: 'agent_result',
      data: { success: true, output: 'update_plan ok: plan updated: 1/3 completed' },
    })

    // Every wire: JSON-lines PlanEvent, SSE envelope, HTML and Markdown transcripts.
    const rpc = toRpcMessages(plan!)
    expect(rpc).toEqual([{ type: 'plan', entries: (plan!.data as { entries: unknown }).entries }])
    expect(rpcOutbound.PlanEvent.schema.safeParse(rpc[0]).success).toBe(true)
    const record = pluralRecord(plan!)
    expect(record.event).toBe('plan')
    expect(SseEnvelopeSchema.safeParse(JSON.parse(record.data)).success).toBe(true)
    const detail = { session_id: session.id, summary: session.summary, events }
    expect(renderHtml(detail)).toContain('<li class="in_progress">[~] fix the &lt;bug&gt;</li>')
    expect(renderMarkdown(detail)).toContain(
      '- [x] read the code _(high)_\n- [ ] fix the &lt;bug&gt; _(in progress)_\n- [ ] run tests _(low)_',
    )
  })

  it('rejects a malformed plan without publishing anything, and an empty plan clears it', async () => {
    const session = await env.manager().create()
    await within(
      session.prompt('!call update_plan {"entries":[{"content":"x","status":"done"}]}').done,
      8000,
      'the turn',
    )
    let events = await session.events()
    expect(events.some((e) => e.type === 'plan')).toBe(false)
    expect(events.find((e) => e.type === 'tool_result')?.data).toMatchObject({
      ok: false,
      error: expect.stringContaining('invalid arguments for update_plan'),
    })
    await within(session.prompt('!call update_plan {"entries":[]}').done, 8000, 'the turn')
    events = await session.events()
    expect(events.filter((e) => e.type === 'plan').map((e) => e.data)).toEqual([
      { call_id: expect.any(String), entries: [] },
    ])
  })

  it('is offered and runs in plan mode', async () => {
    const session = await env.manager().create()
    await session.setMode('plan')
    expect(session.availableTools().map((t) => t.name)).toContain('update_plan')
    await within(
      session.prompt('!call update_plan {"entries":[{"content":"look around","status":"in_progress"}]}').done,
      8000,
      'the turn',
    )
    expect((await session.events()).some((e) => e.type === 'plan')).toBe(true)
  })
})
