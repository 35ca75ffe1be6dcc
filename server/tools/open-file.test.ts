/**
 * The open_file tool in a real session: a `file_open` event with the workspace-relative path
 * and the line, no permission asked; a line past the end, a missing file and a path outside
 * the workspace fail without an event (the last one as a sandbox violation).
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { toolLocations } from '../acp/v1/tool-view.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-open-file-')
})
afterEach(async () => {
  await env.cleanup()
})

async function run(args: Record<string, unknown>) {
  const session = await env.manager({ approval: 'ask' }).create()
  await within(session.prompt(`!call open_file ${JSON.stringify(args)}`).done, 8000, 'the turn')
  return session.events()
}

describe('open_file', () => {
  it('publishes file_open with the relative path and line, without asking', async () => {
    writeFileSync(join(env.cwd, 'a.ts'), 'one\ntwo\nthree\n')
    const events = await run({ path: 'a.ts', line: 2 })
    expect(events.map((e) => e.type)).not.toContain('permission_request')
    expect(events.find((e) => e.type === 'file_open')?.data).toEqual({ path: 'a.ts', line: 2 })
    expect(events.find((e) => e.type === 'tool_result')?.data).toMatchObject({ ok: true })
  })

  it('a line past the end, a missing file and a path outside the workspace fail with no file_open', async () => {
    writeFileSync(join(env.cwd, 'a.ts'), 'one\n')
    for (const [args, error, kind] of [
      [{ path: 'a.ts', line: 5 }, /line 5 is past the end of a\.ts \(1 lines\)/, undefined],
      [{ path: 'nope.ts' }, /nope\.ts/, undefined],
      [{ path: '/etc/hostname' }, /sandbox violation/, 'sandbox_violation'],
    ] as const) {
      const events = await run(args)
      expect(events.map((e) => e.type)).not.toContain('file_open')
      const result = events.find((e) => e.type === 'tool_result')!.data as {
        ok: boolean
        error?: string
        output?: string
      }
      expect(result.ok).toBe(false)
      expect(String(result.error ?? result.output)).toMatch(error)
      if (kind) expect(events.map((e) => e.type)).toContain(kind)
    }
  })

  it('an ACP v1 tool call points at the line (locations), so a following editor reveals it', () => {
    expect(toolLocations('/w', { path: 'a.ts', line: 7 })).toEqual([{ path: '/w/a.ts', line: 7 }])
  })
})
