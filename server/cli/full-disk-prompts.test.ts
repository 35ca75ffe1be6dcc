/**
 * A full disk under the real CLI server: every prompt is either acknowledged (202) and then in
 * the log, or refused at once with 507 `storage_full`; the turn the full disk cut short is closed
 * with the store's reason once space returns, never as if the process had stopped. CHIMERA_HOME
 * is a small tmpfs filled by a file beside the event log. Needs root and mount(8); skipped,
 * saying why, where they are missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { appendFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import type { AnyEvent } from '../events/event-types.ts'

const temp = tempDirs()
const mounted: string[] = []
const children: ChildProcess[] = []

const mountTmpfs = (dir: string, size: string): boolean =>
  spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status === 0
const canMount = (() => {
  if (process.getuid?.() !== 0) return false
  const probe = temp.make('mount-probe-')
  const ok = mountTmpfs(probe, '64k')
  if (ok) spawnSync('umount', [probe])
  return ok
})()

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const m of mounted.reverse()) spawnSync('umount', ['-l', m])
  temp.cleanup()
})

/** Fill the file system of `path` to the last byte. */
function fill(path: string): void {
  const chunk = Buffer.alloc(64 * 1024)
  writeFileSync(path, '')
  for (const size of [chunk.length, 4096, 1]) {
    for (;;) {
      try {
        appendFileSync(path, chunk.subarray(0, size))
      } catch {
        break
      }
    }
  }
}

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

async function until(cond: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe.skipIf(!canMount)('a full disk (root, mount tmpfs)', () => {
  it("every prompt is either 202 and in the log, or 507 storage_full; the cut turn is closed with the store's reason", async () => {
    const home = temp.make('full-home-')
    if (!mountTmpfs(home, '4m')) throw new Error('mount tmpfs failed')
    mounted.push(home)
    const cwd = temp.make('full-ws-')
    const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0', '--cwd', cwd], {
      env: { ...process.env, CHIMERA_HOME: home, CHIMERA_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    children.push(child)
    let stderr = ''
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    await until(async () => /listening on http/.test(stderr), 'the server')
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)![1]!
    const { session_id: id } = (await (await post(`${url}/session`, {})).json()) as { session_id: string }

    const first = await post(`${url}/session/${id}/message`, { message: '!sleep 6000\n!say the long turn' })
    expect(first.status).toBe(202)
    const accepted = [((await first.json()) as { message_id: string }).message_id]
    // The gate: the long turn has started (its first events are on disk) before the disk fills,
    // so it is cut mid-turn, whatever the machine's load (else it would never start: "not run").
    await until(
      async () =>
        ((await (await fetch(`${url}/sessions/${id}`)).json()) as { events: AnyEvent[] }).events.some(
          (e) => e.type === 'turn_start',
        ),
      'the long turn to start',
    )
    const filler = join(home, 'filler')
    fill(filler)
    const refused: string[] = []
    for (let i = 0; i < 15; i++) {
      const r = await post(`${url}/session/${id}/message`, { message: `!say while full ${i}` })
      const body = (await r.json()) as { message_id?: string; error?: string; message?: string }
      if (r.status === 202) accepted.push(body.message_id!)
      else {
        expect(r.status).toBe(507)
        expect(body).toMatchObject({
          error: 'storage_full',
          message: expect.stringMatching(/prompt not recorded.*ENOSPC/),
        })
        refused.push(body.message!)
      }
    }
    // The running turn writes its end while the disk is still full: it fails, and the session goes idle.
    await until(
      async () => ((await (await fetch(`${url}/session/${id}`)).json()) as { status: string }).status === 'idle',
      'the cut turn',
    )
    rmSync(filler)
    for (let i = 0; i < 5; i++) {
      const r = await post(`${url}/session/${id}/message`, { message: `!say after ${i}` })
      expect(r.status).toBe(202)
      accepted.push(((await r.json()) as { message_id: string }).message_id)
    }
    let events: AnyEvent[] = []
    await until(async () => {
      const s = (await (await fetch(`${url}/session/${id}`)).json()) as { status: string }
      events = ((await (await fetch(`${url}/sessions/${id}`)).json()) as { events: AnyEvent[] }).events
      return s.status === 'idle' && events.filter((e) => e.type === 'user_message').length >= accepted.length
    }, 'every accepted prompt in the log')
    const logged = events.flatMap((e) => (e.type === 'user_message' ? [e.data.message_id] : []))
    expect(logged).toEqual(accepted)
    expect(refused.length).toBeGreaterThan(0)
    expect(accepted.length + refused.length).toBe(21)
    const errors = events.flatMap((e) => (e.type === 'error' ? [e.data.message] : []))
    expect(errors.join('\n')).not.toContain('the process stopped')
    // The long turn could not write its end while the disk was full: closed later with that reason.
    expect(
      errors.some((m) => /^the turn was interrupted: event log write failed .*ENOSPC/.test(m)),
      `errors: ${JSON.stringify(errors)}; events: ${events.map((e) => e.type).join(' ')}`,
    ).toBe(true)
    process.stdout.write(
      `full disk: ${accepted.length} accepted (all in the log), ${refused.length} refused with 507\n`,
    )
    child.kill('SIGTERM')
    await new Promise((r) => child.on('exit', r))
  }, 60_000)

  it('ACP (ferret serve over stdio): a prompt the full disk cannot record is answered at once with an error naming it', async () => {
    const home = temp.make('full-acp-home-')
    if (!mountTmpfs(home, '4m')) throw new Error('mount tmpfs failed')
    mounted.push(home)
    const cwd = temp.make('full-acp-ws-')
    const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve', '--cwd', cwd], {
      env: { ...process.env, CHIMERA_HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    children.push(child)
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
    const reply = async (id: number): Promise<Record<string, unknown>> => {
      let found: Record<string, unknown> | undefined
      await until(async () => {
        found = out
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((m) => m.id === id)
        return found !== undefined
      }, `the reply to ${id}`)
      return found!
    }
    const send = (id: number, method: string, params: unknown): void =>
      void child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    await reply(1)
    send(2, 'session/new', { cwd, mcpServers: [] })
    const sessionId = ((await reply(2)).result as { sessionId: string }).sessionId
    fill(join(home, 'filler'))
    const t0 = Date.now()
    send(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '!say while full' }] })
    const r = await reply(3)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(JSON.stringify(r.error)).toMatch(/prompt not recorded.*ENOSPC/)
    child.stdin!.end()
    await new Promise((res) => child.on('exit', res))
  }, 60_000)
})
