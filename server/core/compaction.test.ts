/** Automatic compaction inside a turn, and manual compaction between turns, survive a reload. */
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { afterEach, describe, expect, it } from 'vitest'
import { OfflineProvider } from '../providers/offline.ts'
import { estimateTokens, summarise } from './compaction.ts'
import { SessionManager } from './manager.ts'
import { ModelRegistry } from './model-registry.ts'

const temp = tempDirs()
const tmp = (prefix: string) => temp.make(prefix)
const managers: SessionManager[] = []
afterEach(async () => {
  // Shut down: each closes the store it opened (its segment append handles).
  await Promise.all(managers.splice(0).map((m) => m.shutdown(5000)))
  temp.cleanup()
})

const manager = (home: string, cwd: string, contextWindow: number): SessionManager => {
  const m = new SessionManager({
    agent: 'otter',
    cwd,
    home,
    models: new ModelRegistry([new OfflineProvider({ contextWindow })]),
  })
  managers.push(m)
  return m
}

describe('automatic compaction', () => {
  it('summarises earlier turns before a model call once the history passes 80% of the context window', async () => {
    const home = tmp('cmp-home-')
    const cwd = tmp('cmp-ws-')
    const s = await manager(home, cwd, 60).create()
    const long = 'x'.repeat(120)
    await s.prompt(`!say ${long}`).done
    expect((await s.events()).some((e) => e.type === 'compaction')).toBe(false)
    const before = s.messages()
    const out = await s.prompt('!say second').done
    expect(out).toMatchObject({ success: true, output: 'second' })
    const events = await s.events()
    const compactions = events.filter((e) => e.type === 'compaction')
    expect(compactions).toHaveLength(1)
    const c = compactions[0]!
    if (c.type !== 'compaction') throw new Error('unreachable')
    // Everything before the second turn's user message is summarised; that message is kept.
    expect(c.data).toEqual({ summary: summarise(before), messages_before: before.length + 1, messages_after: 2 })
    const i = events.indexOf(c)
    expect(events[i - 1]!.type).toBe('turn_start')
    expect(events[i + 1]!.type).toBe('step_start')
    expect(s.messages()).toEqual([
      { role: 'system', content: summarise(before) },
      { role: 'user', content: '!say second' },
      { role: 'assistant', content: 'second' },
    ])
    const usage = events.filter((e) => e.type === 'usage').at(-1)
    expect(usage?.type === 'usage' && usage.data.context_window).toBe(60)
    // A reload folds the same events into the same history.
    const again = await manager(home, cwd, 60).get(s.id)
    expect(again.messages()).toEqual(s.messages())
  })

  it('does not compact while the history fits', async () => {
    const s = await manager(tmp('cmp-home-'), tmp('cmp-ws-'), 100_000).create()
    await s.prompt('!say a').done
    await s.prompt('!say b').done
    expect((await s.events()).some((e) => e.type === 'compaction')).toBe(false)
    expect(estimateTokens(s.messages())).toBeLessThan(100)
  })

  it('manual compact keeps only the summary, and a reload agrees', async () => {
    const home = tmp('cmp-home-')
    const cwd = tmp('cmp-ws-')
    const s = await manager(home, cwd, 100_000).create()
    await s.prompt('!say one').done
    const e = await s.compact()
    expect(e.data).toMatchObject({ messages_before: 2, messages_after: 1 })
    expect(s.messages()).toEqual([{ role: 'system', content: e.data.summary }])
    expect((await manager(home, cwd, 100_000).get(s.id)).messages()).toEqual(s.messages())
  })

  it("serialises each tool call's arguments once, however often the history is estimated", () => {
    let serialised = 0
    const args = { path: 'a.txt', toJSON: () => (serialised++, { path: 'a.txt' }) }
    const history = [
      { role: 'user' as const, content: 'read it' },
      { role: 'assistant' as const, content: '', tool_calls: [{ call_id: 'c1', tool: 'Read', args }] },
    ]
    const first = estimateTokens(history)
    expect(first).toBe(Math.ceil(('read it'.length + JSON.stringify({ path: 'a.txt' }).length) / 4))
    for (let i = 0; i < 5; i++) expect(estimateTokens(history)).toBe(first)
    expect(serialised).toBe(1)
  })
})
