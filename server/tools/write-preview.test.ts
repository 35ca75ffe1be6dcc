/**
 * Write's preview (the old text its diff shows): the file's text when it exists, null when it
 * does not, and nothing — without a sandbox-violation report — for a path outside the
 * workspace, through a symlink out of it, under a protected path, for a binary file or one over
 * the diff bound. In a session, the tool_call and permission_request events carry it.
 */
import { symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import { PREVIEW_MAX_BYTES, writeTool } from './write.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const preview = async (path: string, ctx = recordingContext(ws.cwd)) => ({
  ctx,
  p: await writeTool.preview!({ path, content: 'new' }, ctx),
})

describe('Write preview', () => {
  it('is the old text of an existing file, null for a new one', async () => {
    ws.write({ 'a.txt': 'old\ntext\n' })
    expect((await preview('a.txt')).p).toEqual({ old_text: 'old\ntext\n' })
    expect((await preview('sub/new.txt')).p).toEqual({ old_text: null })
  })

  it('reads nothing outside the workspace or under a protected path, and reports no violation', async () => {
    writeFileSync(join(ws.outside, 'secret.txt'), 'secret')
    symlinkSync(join(ws.outside, 'secret.txt'), join(ws.cwd, 'link.txt'))
    ws.write({ 'guarded/x.txt': 'guarded' })
    const ctx = { ...recordingContext(ws.cwd), protectedPaths: [join(ws.cwd, 'guarded')] }
    for (const path of [join(ws.outside, 'secret.txt'), '../outside/secret.txt', 'link.txt', 'guarded/x.txt']) {
      const { p } = await preview(path, ctx)
      expect([path, p]).toEqual([path, undefined])
    }
    expect(ctx.violations).toEqual([])
  })

  it('leaves out binary files and files over the diff bound', async () => {
    ws.write({
      'bin.dat': Buffer.from([1, 0, 2]),
      'big.txt': 'x'.repeat(PREVIEW_MAX_BYTES + 1),
      'edge.txt': 'y'.repeat(PREVIEW_MAX_BYTES),
    })
    expect((await preview('bin.dat')).p).toBeUndefined()
    expect((await preview('big.txt')).p).toBeUndefined()
    expect((await preview('edge.txt')).p?.old_text).toHaveLength(PREVIEW_MAX_BYTES)
  })
})

describe('Write preview in a session', () => {
  let env: TestEnv
  beforeEach(() => {
    env = testEnv('chimera-preview-')
  })
  afterEach(async () => {
    await env.cleanup()
  })

  it('puts the old text on the tool_call and the permission_request, read before the write', async () => {
    writeFileSync(join(env.cwd, 'n.txt'), 'before\n')
    const session = await env.manager({ approval: 'ask' }).create()
    const seen = session.stream({ signal: AbortSignal.timeout(8000) })
    const done = session.prompt(
      '!call Write {"path":"n.txt","content":"after\\n"}\n!call Write {"path":"fresh.txt","content":"x"}',
    ).done
    let answered = 0
    for await (const e of seen) {
      if (e.type === 'permission_request') {
        session.replyPermission(e.data.request_id, 'allow', 'test')
        if (++answered === 2) break
      }
    }
    await within(done, 8000, 'the turn')
    const events = await session.events()
    const of = (type: string) =>
      events.filter((e) => e.type === type).map((e) => (e.data as { old_text?: unknown }).old_text)
    expect(of('tool_call')).toEqual(['before\n', null])
    expect(of('permission_request')).toEqual(['before\n', null])
  })
})
