/**
 * Seed-dialect params that name their fix (acp-seed.openrpc.yaml: by-name params, no other keys
 * accepted on the methods marked `x-params-additional: false`): a `session/message` with
 * `message` instead of `prompt` says `prompt` is missing and what it accepts, and that `message`
 * is not a key; `session/setSandbox {mode}` is refused, naming `mode`, not silently ignored.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { startAcp } from './fixtures/in-process.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-params-')
})
afterEach(async () => {
  await env.cleanup()
})

describe('seed params errors', () => {
  it('session/message without prompt names the field, what it accepts, and the unknown key', async () => {
    const s = startAcp('otter', env.manager())
    await s.call('initialize', {})
    const sid = (await s.call('session/new', {})).result.sessionId
    const r = await s.call('session/message', { sessionId: sid, message: 'hi' })
    expect(r.error.code).toBe(-32602)
    expect(r.error.data.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'prompt', message: 'missing: expected string or array' }),
        expect.objectContaining({ path: '', message: expect.stringMatching(/Unrecognized key: "message"/) }),
      ]),
    )
    expect(JSON.stringify(r.error)).not.toMatch(/Invalid input"/)
    const wrongBlock = await s.call('session/message', { sessionId: sid, prompt: [{ type: 'image' }] })
    expect(wrongBlock.error.data.issues[0]).toMatchObject({
      path: 'prompt',
      message: expect.stringMatching(/^expected string, or else: 0\.type: expected "text"/),
    })
    s.input.end()
    await s.done
  })

  it('session/setSandbox refuses an unknown key instead of ignoring it', async () => {
    const s = startAcp('ferret', env.manager())
    await s.call('initialize', {})
    const sid = (await s.call('session/new', {})).result.sessionId
    const r = await s.call('session/setSandbox', { sessionId: sid, mode: 'read-only' })
    expect(r.error).toMatchObject({
      code: -32602,
      data: { issues: [{ path: '', message: expect.stringMatching(/Unrecognized key: "mode"/) }] },
    })
    expect((await s.call('session/setSandbox', { sessionId: sid })).result).toMatchObject({ mode: 'workspace-write' })
    s.input.end()
    await s.done
  })
})
