/**
 * The JSON-lines mapping is a pure function of one event: mapping a session's events from any
 * cursor gives exactly the tail of the full mapping (no state carried between events), every
 * message validates against the RPC spec, and no tool message lacks its tool name.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { rpcOutbound } from '../../generated/rpc/jsonl.gen.ts'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { RPC_EVENT_MAP, toRpcMessages } from './event-map.ts'
import { EVENT_TYPES } from '../events/event-types.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-rpcmap-')
})
afterEach(async () => {
  await env.cleanup()
})

it('has a row for every event type', () => {
  expect(Object.keys(RPC_EVENT_MAP).sort()).toEqual([...EVENT_TYPES].sort())
})

it('maps the same from every cursor as from the start', async () => {
  const session = await env.manager({ sandbox: 'danger-full-access' }).create()
  await within(
    session.prompt('!think first\n!say hi\n!call Bash {"command":"echo out; echo err >&2"}\n!call Nope {}').done,
    8000,
    'the turn',
  )
  await within(session.prompt('/undo').done, 5000, 'the undo')
  const events = await session.events()
  const full = events.map((e) => toRpcMessages(e))
  for (let k = 0; k < events.length; k++) {
    const tail = (await session.events(k)).map((e) => toRpcMessages(e))
    expect(tail).toEqual(full.slice(k))
  }
  const flat = full.flat()
  for (const m of flat) {
    const spec = Object.values(rpcOutbound).find((o) => o.schema.safeParse(m).success)
    expect(spec, JSON.stringify(m)).toBeDefined()
    if (m.type === 'tool_execution') {
      expect(m.tool_name).not.toBe('')
      if (m.status === 'started') expect(m.tool_args).toEqual({ command: 'echo out; echo err >&2' })
    }
  }
  const statuses = flat.filter((m) => m.type === 'tool_execution').map((m) => (m as { status: string }).status)
  expect(statuses.filter((s) => s !== 'progress')).toEqual(['started', 'completed', 'failed'])
  expect(statuses.filter((s) => s === 'progress').length).toBeGreaterThanOrEqual(1)
  expect(flat.some((m) => m.type === 'reasoning')).toBe(true)
  expect(flat.at(-1)).toEqual({
    type: 'message',
    role: 'assistant',
    content: '/undo: rewound 1 turn, 0 files restored (0 remaining)',
    done: true,
  })
})
