/**
 * `DELETE /session/{id}` removes a session from everywhere it is listed (chimera.openapi.yaml
 * session.delete), against the built CLI over one CHIMERA_HOME: `GET /session`, `GET /sessions`,
 * the `GET /sessions/{id}` detail, ACP `session/list` of a later `otter serve --acp`, and
 * `chimera otter sessions list`. A session deleted mid-turn stays gone; one from an earlier
 * server run (on disk only) is deleted too.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { cliProcesses, type Proc } from './fixtures/cli-process.ts'

const { start, temp } = cliProcesses()
const TOKEN = 'delete-test-token'
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }

async function serve(home: string): Promise<{ p: Proc; url: string }> {
  const p = start(['otter', 'serve', '--port', '0', '--auth-token', TOKEN, '--approval', 'allow'], {
    CHIMERA_HOME: home,
    CHIMERA_LOG_LEVEL: 'info',
  })
  const url = (await p.waitStderr(/listening on http:\/\/127\.0\.0\.1:\d+/)).replace(/^listening on /, '')
  return { p, url }
}

const get = async (url: string) => {
  const r = await fetch(url, { headers: auth })
  return { status: r.status, body: r.status === 200 ? ((await r.json()) as any) : undefined }
}

async function listings(url: string) {
  return {
    live: (await get(`${url}/session`)).body as string[],
    sessions: ((await get(`${url}/sessions`)).body.sessions as { session_id: string }[]).map((s) => s.session_id),
  }
}

function cliListed(home: string): string[] {
  const r = spawnSync(process.execPath, [CLI_BUNDLE, 'otter', 'sessions', 'list', '--json'], {
    env: { ...process.env, CHIMERA_HOME: home },
    encoding: 'utf8',
  })
  expect(r.status).toBe(0)
  return (JSON.parse(r.stdout).sessions as { session_id: string }[]).map((s) => s.session_id)
}

async function acpListed(home: string): Promise<string[]> {
  const p = start(['otter', 'serve', '--acp'], { CHIMERA_HOME: home })
  const send = (m: unknown) => p.child.stdin.write(`${JSON.stringify(m)}\n`)
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '0.1' } })
  await p.waitLine((m) => m.id === 1)
  send({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} })
  const r = (await p.waitLine((m) => m.id === 2)) as { result: { sessions: { session_id: string }[] } }
  p.child.stdin.end()
  expect(await p.exit()).toBe(0)
  return r.result.sessions.map((s) => s.session_id)
}

async function turn(url: string, id: string, message: string) {
  expect(
    (await fetch(`${url}/session/${id}/message`, { method: 'POST', headers: auth, body: JSON.stringify({ message }) }))
      .status,
  ).toBe(202)
}

describe('DELETE /session/{id}', () => {
  it('removes the session from the HTTP listings, the detail, ACP session/list and the CLI listing', async () => {
    const home = temp.make('delete-home-')
    const { p, url } = await serve(home)
    const create = async () =>
      (
        (await (await fetch(`${url}/session`, { method: 'POST', headers: auth, body: '{}' })).json()) as {
          session_id: string
        }
      ).session_id
    const kept = await create()
    const gone = await create()
    const midTurn = await create()
    await turn(url, kept, '!say kept')
    await turn(url, gone, '!say gone')
    for (let i = 0; i < 200 && (await get(`${url}/sessions/${gone}`)).body?.summary?.success === undefined; i++)
      await new Promise((r) => setTimeout(r, 25))
    await turn(url, midTurn, '!sleep 2000\n!say late')
    expect((await listings(url)).sessions).toEqual(expect.arrayContaining([kept, gone, midTurn]))

    expect((await fetch(`${url}/session/${gone}`, { method: 'DELETE', headers: auth })).status).toBe(204)
    expect((await fetch(`${url}/session/${midTurn}`, { method: 'DELETE', headers: auth })).status).toBe(204)
    expect((await fetch(`${url}/session/${gone}`, { method: 'DELETE', headers: auth })).status).toBe(404)
    const after = await listings(url)
    expect(after.live).toEqual([kept])
    expect(after.sessions).toEqual([kept])
    expect((await get(`${url}/sessions/${gone}`)).status).toBe(404)
    expect((await get(`${url}/sessions/${midTurn}`)).status).toBe(404)
    p.child.kill('SIGTERM')
    expect(await p.exit()).toBe(0)
    // The cancelled turn wrote nothing back after the delete.
    expect(readdirSync(join(home, 'eventlog')).filter((d) => d !== kept && d.startsWith('otter-'))).toEqual([])

    expect(cliListed(home)).toEqual([kept])
    expect(await acpListed(home)).toEqual([kept])
  })

  it('deletes a session of an earlier server run that is only on disk', async () => {
    const home = temp.make('delete-disk-')
    const first = await serve(home)
    const id = (
      (await (
        await fetch(`${first.url}/sessions`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ prompt: '!say old' }),
        })
      ).json()) as { session_id: string }
    ).session_id
    for (let i = 0; i < 200 && (await get(`${first.url}/sessions/${id}`)).body?.summary?.success === undefined; i++)
      await new Promise((r) => setTimeout(r, 25))
    first.p.child.kill('SIGTERM')
    expect(await first.p.exit()).toBe(0)
    expect(cliListed(home)).toEqual([id])

    const second = await serve(home)
    expect((await listings(second.url)).live).toEqual([])
    expect((await fetch(`${second.url}/session/${id}`, { method: 'DELETE', headers: auth })).status).toBe(204)
    expect((await listings(second.url)).sessions).toEqual([])
    expect(existsSync(join(home, 'eventlog', id))).toBe(false)
    second.p.child.kill('SIGTERM')
    expect(await second.p.exit()).toBe(0)
    expect(cliListed(home)).toEqual([])
  })

  it('requests racing a delete never bring the session back, queue a prompt it drops, or fail with 5xx', async () => {
    const home = temp.make('delete-race-')
    const { p, url } = await serve(home)
    const post = (path: string, body: unknown) =>
      fetch(`${url}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) })
    const id = ((await (await post('/sessions', { prompt: '!sleep 3000' })).json()) as { session_id: string })
      .session_id
    for (let i = 0; i < 10; i++)
      expect((await post(`/sessions/${id}/turns`, { prompt: `queued ${i}` })).status).toBe(202)
    const deleting = fetch(`${url}/session/${id}`, { method: 'DELETE', headers: auth })
    let deleted = false
    void deleting.then(() => (deleted = true))
    const seen: number[] = []
    // While the delete closes the turn and the queued prompts, and after it answered.
    for (let i = 0; i < 30; i++) {
      seen.push((await fetch(`${url}/sessions/${id}`, { headers: auth })).status)
      seen.push((await post(`/sessions/${id}/turns`, { prompt: 'after the delete began' })).status)
      if (deleted && i > 20) break
    }
    expect((await deleting).status).toBe(204)
    // Before the delete began a request may still be served; once one found no session, none
    // after it did (nothing brought it back), and no request failed on the half-deleted files.
    const firstGone = seen.indexOf(404)
    expect(firstGone).toBeGreaterThanOrEqual(0)
    expect(seen.slice(firstGone).every((st) => st === 404)).toBe(true)
    expect(seen.every((st) => st < 500)).toBe(true)
    expect((await get(`${url}/session/${id}`)).status).toBe(404)
    expect((await listings(url)).sessions).toEqual([])
    expect(existsSync(join(home, 'eventlog', id))).toBe(false)
    expect(p.stderr()).not.toMatch(/unhandled error|rejected .* expected/)
    p.child.kill('SIGTERM')
    expect(await p.exit()).toBe(0)
  })
})
