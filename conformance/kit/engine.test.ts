/**
 * The abstract-scenario engine on a scripted adapter (no process): tool results matched by
 * call id whatever their order, text completed only after the turn ended is a failure, and a
 * turn end of the wrong outcome names both.
 */
import { describe, expect, it } from 'vitest'
import { Inbox } from '../harness/arms/queue.ts'
import type { Adapter, AdapterContext, Observation } from './adapters/types.ts'
import { parseScenario } from './corpus/scenario.ts'
import { resolveProfile, ProfileSchema } from './profiles/profile.ts'
import { ScenarioRun } from './run/abstract.ts'

/** Plays `script` (observations without the session) once a prompt is sent. */
class Scripted implements Adapter {
  readonly transport = 'rpc' as const
  readonly #inbox = new Inbox<Observation>()
  readonly #turns: Omit<Observation, 'session'>[][]
  constructor(turns: Omit<Observation, 'session'>[][]) {
    this.#turns = turns
  }
  capabilities = () => new Set<string>()
  open = async () => {}
  prompt = async () => {
    for (const o of this.#turns.shift() ?? []) this.#inbox.push({ ...o, session: 'main' })
  }
  cancel = async () => {}
  steer = async () => {}
  answer = async () => {}
  resume = async () => {}
  next = (ms: number) => this.#inbox.next(ms)
  violations = () => []
  transcript = () => []
  dispose = async () => this.#inbox.close()
}

const ctx: AdapterContext = {
  workspace: '/nonexistent',
  profile: resolveProfile(ProfileSchema.parse({ profile: 1, name: 't', targets: {} }), '/'),
  timeoutMs: 300,
  startupGraceMs: 0,
}
const head = '{"scenario":1,"id":"core.t.t","title":"t","section":"s","transports":["rpc"]}\n'
const run = async (steps: string, turns: Omit<Observation, 'session'>[][]) => {
  const r = new ScenarioRun(new Scripted(turns), ctx)
  await r.open('main')
  return r.run(parseScenario(head + steps))
}
const call = (id: string): Omit<Observation, 'session'> => ({
  kind: 'tool_call',
  callId: id,
  action: 'read',
  wireType: 'tool',
  frame: {},
})
const result = (id: string, output: string): Omit<Observation, 'session'> => ({
  kind: 'tool_result',
  callId: id,
  ok: true,
  output,
  wireType: 'tool',
  frame: {},
})
const end = (outcome: 'completed' | 'failed'): Omit<Observation, 'session'> => ({
  kind: 'turn_end',
  outcome,
  wireType: 'end',
  frame: {},
})

describe('the scenario engine', () => {
  const steps =
    '{"prompt":"x"}\n{"expectToolCall":{"action":"read"},"as":"a"}\n{"expectToolCall":{"action":"read"},"as":"b"}\n{"expectToolResult":{"call":"a","ok":true,"output":"A"}}\n{"expectToolResult":{"call":"b","ok":true,"output":"B"}}\n{"expectTurnEnd":"completed"}\n'
  it('matches tool results by call id when concurrent calls finish out of order', async () => {
    await expect(
      run(steps, [[call('1'), call('2'), result('2', 'B'), result('1', 'A'), end('completed')]]),
    ).resolves.toBeUndefined()
  })
  it('still fails a result whose output is wrong', async () => {
    await expect(
      run(steps, [[call('1'), call('2'), result('2', 'A'), result('1', 'B'), end('completed')]]),
    ).rejects.toThrow(/tool output/)
  })
  it('fails text that is complete only after the turn ended', async () => {
    const text = (t: string): Omit<Observation, 'session'> => ({ kind: 'text', text: t, wireType: 'text', frame: {} })
    await expect(
      run('{"prompt":"x"}\n{"expectText":"ab"}\n', [[text('a'), end('completed'), text('b')]]),
    ).rejects.toThrow(/complete only after the turn had ended/)
  })
  it('names the expected and the actual outcome of a turn', async () => {
    await expect(run('{"prompt":"x"}\n{"expectTurnEnd":"completed"}\n', [[end('failed')]])).rejects.toThrow(
      /expected the turn to end completed, it ended failed/,
    )
  })
  it("expectClientRequest finds the agent's request to the client by method and path, and fails when none came", async () => {
    const req = (method: string, path: string): Omit<Observation, 'session'> => ({
      kind: 'client_request',
      wireType: method,
      text: path,
      frame: {},
    })
    const steps =
      '{"prompt":"x"}\n{"expectClientRequest":{"method":"fs/write_text_file","path":"b.txt"}}\n{"expectTurnEnd":"completed"}\n'
    await expect(
      run(steps, [[req('fs/read_text_file', 'b.txt'), req('fs/write_text_file', 'b.txt'), end('completed')]]),
    ).resolves.toBeUndefined()
    await expect(run(steps, [[req('fs/write_text_file', 'a.txt'), end('completed')]])).rejects.toThrow(
      /expected the agent to ask the client fs\/write_text_file for b.txt/,
    )
  })
  it('a clientFs scenario binds only to ACP v1', () => {
    expect(() =>
      parseScenario(
        '{"scenario":1,"id":"acp.t.t","title":"t","section":"s","transports":["acp-v1","rpc"],"clientFs":true}\n',
      ),
    ).toThrow(/clientFs binds only to acp-v1/)
  })
})
