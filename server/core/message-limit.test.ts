/**
 * The user-message limit (server/core/message-limit.ts): a template of `$1` × 6,000 with a
 * 10 KB argument (60 MB once rendered) is refused while it renders, stopping after about 1 MiB;
 * a prompt over 1 MiB is refused before anything is queued or written; each wire shows the
 * coded error `message_too_large` (HTTP 413, JSON-RPC Invalid params, a failed RPC response).
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createHttpClient } from '../../client/index.ts'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { serveAcp } from '../acp/serve-acp.ts'
import { customCommands, CustomCommands } from '../commands/custom-commands.ts'
import { renderTemplate } from '../commands/template.ts'
import { createLogger } from '../log.ts'
import { createRpcHandlers } from '../rpc/handlers.ts'
import { testEnv, within, type TestEnv } from './fixtures/harness.ts'
import { MAX_USER_MESSAGE_BYTES } from './message-limit.ts'
import { ChimeraError } from '../errors.ts'
import { loadFrontmatterParser } from '../commands/frontmatter.ts'

// Command and agent files are read synchronously once the YAML parser is loaded (the manager and the routes load it).
beforeAll(() => loadFrontmatterParser())

const TEMPLATE = `${'$1'.repeat(6000)}\n`
const ARG = 'a'.repeat(10 * 1024)

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-msg-limit-')
  mkdirSync(join(env.cwd, '.opencode', 'command'), { recursive: true })
  writeFileSync(join(env.cwd, '.opencode', 'command', 'big.md'), TEMPLATE)
})
afterEach(async () => {
  await env.cleanup()
})

describe('rendering stops at the limit', () => {
  it('a multiplying template is refused after about 1 MiB, not built to 60 MB first', () => {
    let reads = 0
    const positional = new Proxy([ARG], {
      get(t, k, r) {
        if (k === '0') reads++
        return Reflect.get(t, k, r)
      },
    })
    expect(() => renderTemplate('$1'.repeat(6000), { positional, named: {}, all: ARG }, [])).toThrow(
      expect.objectContaining({ name: 'ChimeraError', code: 'message_too_large' }),
    )
    // 1 MiB / 10 KiB = 102 substitutions, then it stops (6,000 if it rendered everything).
    expect(reads).toBeLessThanOrEqual(Math.ceil(MAX_USER_MESSAGE_BYTES / ARG.length) + 1)
  })

  it('renders what fits, and the invoke route throws the coded error (not command_invoke_failed)', () => {
    const c = new CustomCommands({ cwd: env.cwd, userDir: join(env.base, 'none') })
    expect(c.render('big', 'x')).toBe('x'.repeat(6000))
    let err: unknown
    try {
      c.invoke('big', { session_id: 's', args: [ARG] })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(ChimeraError)
    expect((err as ChimeraError).code).toBe('message_too_large')
    expect((err as ChimeraError).detail).toEqual({ limit_bytes: MAX_USER_MESSAGE_BYTES })
  })
})

describe('the core refuses a message over the limit', () => {
  it('a /big prompt and a plain prompt over 1 MiB throw, and nothing is written', async () => {
    const s = await env.manager({ commands: customCommands({ userDir: join(env.base, 'none') }) }).create()
    expect(() => s.prompt(`/big ${ARG}`)).toThrow(/exceeds the 1048576-byte limit/)
    expect(() => s.prompt('é'.repeat(MAX_USER_MESSAGE_BYTES / 2 + 1))).toThrow(
      expect.objectContaining({ name: 'ChimeraError', code: 'message_too_large' }),
    )
    expect(() => s.promptCommand('x'.repeat(MAX_USER_MESSAGE_BYTES + 1), { name: 'big', arguments: '' })).toThrow(
      expect.objectContaining({ name: 'ChimeraError', code: 'message_too_large' }),
    )
    await s.flush()
    expect(await s.events()).toEqual([])
    expect((await within(s.prompt('/big y').done, 10_000, 'a small /big')).success).toBe(true)
  })

  it('the JSON-lines RPC prompt fails with the reason', async () => {
    const s = await env.manager().create()
    const h = createRpcHandlers(s)
    await expect(
      h.prompt!(
        { type: 'prompt', message: 'x'.repeat(MAX_USER_MESSAGE_BYTES + 1) } as never,
        { reply: () => {} } as never,
      ),
    ).rejects.toThrow(/the message \(1048577 bytes\) exceeds/)
  })
})

describe('each wire maps message_too_large', () => {
  let target: ServerTarget | undefined
  afterEach(async () => {
    await target?.close()
    target = undefined
  })

  it('HTTP: 413 message_too_large on invoke and on a message; nothing submitted', async () => {
    target = inProcessTarget()
    mkdirSync(join(target.cwd, '.opencode', 'command'), { recursive: true })
    writeFileSync(join(target.cwd, '.opencode', 'command', 'big.md'), TEMPLATE)
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const id = (await api.POST('/session', { body: {} })).data!.session_id
    const inv = await api.POST('/commands/{name}/invoke', {
      params: { path: { name: 'big' } },
      body: { session_id: id, args: [ARG] },
    })
    expect(inv.response.status).toBe(413)
    expect(inv.error).toMatchObject({ error: 'message_too_large', detail: { limit_bytes: MAX_USER_MESSAGE_BYTES } })
    const msg = await api.POST('/session/{id}/message', {
      params: { path: { id } },
      body: { message: 'x'.repeat(MAX_USER_MESSAGE_BYTES + 1) },
    })
    expect(msg.response.status).toBe(413)
    expect(msg.error).toMatchObject({ error: 'message_too_large' })
    const snap = await api.GET('/session/{id}', { params: { path: { id } } })
    expect(snap.data).toMatchObject({ event_count: 0, messages: [] })
  })

  it('ACP: session/prompt over the limit is Invalid params with error message_too_large', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    let text = ''
    output.setEncoding('utf8').on('data', (d: string) => void (text += d))
    const done = serveAcp({
      agent: 'otter',
      version: '0.0.0',
      input,
      output,
      logger: createLogger({ level: 'error', sink: () => {} }),
      manager: env.manager(),
    })
    const frame = (id: number) =>
      within(
        new Promise<Record<string, any>>((resolve) => {
          const look = (): void => {
            const m = text
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l))
              .find((f) => f.id === id && !('method' in f))
            if (m) resolve(m)
            else setTimeout(look, 20)
          }
          look()
        }),
        8000,
        `response ${id}`,
      )
    const send = (id: number, method: string, params: unknown) =>
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    await frame(1)
    send(2, 'session/new', { cwd: env.cwd, mcpServers: [] })
    const sessionId = (await frame(2)).result.sessionId
    send(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x'.repeat(MAX_USER_MESSAGE_BYTES + 1) }] })
    expect((await frame(3)).error).toMatchObject({
      code: -32602,
      message: 'Invalid params',
      data: { error: 'message_too_large' },
    })
    input.end()
    await done
  })
})
