/**
 * Who answers a tool's permission request by default, as users start the built CLI: where a
 * person is on the other end the call asks — `otter serve --acp` sends a seed
 * `permission_request` (as docs/zed.md shows for `rm -rf`), `otter serve` over HTTP holds the run
 * until `POST /tool/approve` — while `chimera code --mode rpc` (the parent process is the user)
 * runs it. `--help` states each default and why.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { cliProcesses } from './fixtures/cli-process.ts'

const { start, temp } = cliProcesses()
const send = (p: ReturnType<typeof start>, m: unknown) => p.child.stdin.write(`${JSON.stringify(m)}\n`)

describe('default approval', () => {
  it('otter serve --acp asks the client before rm -rf runs', async () => {
    const ws = temp.make('appr-acp-ws-')
    const p = start(['otter', 'serve', '--acp', '--cwd', ws, '--sandbox', 'danger-full-access'], {
      CHIMERA_HOME: temp.make('appr-acp-'),
    })
    send(p, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '0.1' } })
    expect(await p.waitLine((m) => m.id === 1)).toMatchObject({ result: { capabilities: { permissionRequest: true } } })
    send(p, { jsonrpc: '2.0', id: 2, method: 'session/new', params: {} })
    const sid = ((await p.waitLine((m) => m.id === 2)).result as { sessionId: string }).sessionId
    send(p, {
      jsonrpc: '2.0',
      id: 3,
      method: 'session/message',
      params: { sessionId: sid, prompt: '!call Bash {"command":"mkdir x && rm -rf ./x && touch ran"}' },
    })
    const ask = (await p.waitLine((m) => (m.params as any)?.update?.sessionUpdate === 'permission_request')) as any
    expect(ask.params.update).toMatchObject({ tool: 'Bash', input: { command: expect.stringContaining('rm -rf') } })
    expect(existsSync(join(ws, 'ran'))).toBe(false)
    send(p, {
      jsonrpc: '2.0',
      id: 4,
      method: 'permission/respond',
      params: { requestId: ask.params.update.requestId, reply: 'deny' },
    })
    expect(await p.waitLine((m) => m.id === 3)).toMatchObject({ result: { stopReason: 'end_turn' } })
    expect(existsSync(join(ws, 'ran'))).toBe(false)
    p.child.stdin.end()
    expect(await p.exit()).toBe(0)
  })

  it('otter serve (HTTP) holds a Write until POST /tool/approve answers', async () => {
    const ws = temp.make('appr-http-ws-')
    const p = start(['otter', 'serve', '--port', '0', '--cwd', ws], {
      CHIMERA_HOME: temp.make('appr-http-'),
      CHIMERA_LOG_LEVEL: 'info',
    })
    const url = (await p.waitStderr(/listening on http:\/\/127\.0\.0\.1:\d+/)).replace(/^listening on /, '')
    const json = { 'content-type': 'application/json' }
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) })
    const created = (await (
      await post('/sessions', { prompt: '!call Write {"path":"w.txt","content":"w"}' })
    ).json()) as { session_id: string }
    let request: { request_id: string } | undefined
    for (let i = 0; i < 250 && !request; i++) {
      const detail = (await (await fetch(`${url}/sessions/${created.session_id}`)).json()) as {
        events: { type: string; data: { request_id: string } }[]
      }
      request = detail.events.find((e) => e.type === 'permission_request')?.data
      if (!request) await new Promise((r) => setTimeout(r, 40))
    }
    expect(request).toBeDefined()
    expect(existsSync(join(ws, 'w.txt'))).toBe(false)
    const answer = await post('/tool/approve', {
      session_id: created.session_id,
      request_id: request!.request_id,
      decision: 'allow',
    })
    expect(answer.status).toBe(200)
    // The turn's end, not the file's appearance (Write creates the file, then writes into it).
    let ended = false
    for (let i = 0; i < 250 && !ended; i++) {
      const detail = (await (await fetch(`${url}/sessions/${created.session_id}`)).json()) as {
        events: { type: string }[]
      }
      ended = detail.events.some((e) => e.type === 'agent_result')
      if (!ended) await new Promise((r) => setTimeout(r, 40))
    }
    expect(ended).toBe(true)
    expect(readFileSync(join(ws, 'w.txt'), 'utf8')).toBe('w')
    p.child.kill('SIGTERM')
    expect(await p.exit()).toBe(0)
  })

  it('code --mode rpc runs a Write without asking (the parent is the user)', async () => {
    const ws = temp.make('appr-rpc-ws-')
    const p = start(['code', '--mode', 'rpc', '--cwd', ws], { CHIMERA_HOME: temp.make('appr-rpc-') })
    p.child.stdin.end(
      `${JSON.stringify({ type: 'prompt', id: 1, message: '!call Write {"path":"w.txt","content":"w"}' })}\n`,
    )
    expect(await p.exit()).toBe(0)
    expect(p.lines().some((m) => m.type === 'permission_request')).toBe(false)
    expect(readFileSync(join(ws, 'w.txt'), 'utf8')).toBe('w')
  })

  it('--help states each default and who answers', () => {
    const help = (...args: string[]) =>
      spawnSync(process.execPath, [CLI_BUNDLE, ...args, '--help'], { encoding: 'utf8' }).stdout.replace(/\s+/g, ' ')
    expect(help('otter', 'serve')).toMatch(/Default ask: a person answers each request/)
    expect(help('ferret', 'serve')).toMatch(/Default auto: edits and read-only commands run/)
    expect(help('code')).toMatch(/Default allow: the parent process driving the RPC is the user/)
  })
})
