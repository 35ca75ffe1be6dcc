/**
 * The bundled CLI over a real event log: `chimera otter sessions list|show`, `chimera otter
 * share` (every sink, the http one against a loopback collector) and `chimera mink runs [cost]`
 * print the same data as the library (the HTTP routes' data), only that on stdout; `--help` on
 * each; usage errors exit 2 with one line on stderr and nothing on stdout; runtime failures
 * exit 1.
 */
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { SessionManager } from '../core/manager.ts'
import { costRollup, listRuns } from '../runs/rollup.ts'
import { renderTranscript, readSessionDetail } from '../share/transcript.ts'
import { openEventStore } from '../store/open.ts'
import { eventlogRoot } from '../store/paths.ts'

let base: string
let home: string
const ids: string[] = []

beforeAll(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-feat-cli-')))
  home = join(base, 'home')
  const cwd = join(base, 'ws')
  mkdirSync(cwd)
  const m = new SessionManager({ agent: 'otter', cwd, home })
  for (const text of ['!say first <b>bold</b>', '!say second', '!fail broken']) {
    const s = await m.create()
    await s.prompt(text).done
    ids.push(s.id)
  }
  await (await m.get(ids[2]!)).rename('The broken one')
  const mink = new SessionManager({ agent: 'mink', cwd, home })
  const s = await mink.create()
  await s.prompt('!say a mink run').done
  ids.push(s.id)
  await m.shutdown()
  await mink.shutdown()
  // A damaged run directory: skipped and counted, never fatal.
  mkdirSync(join(eventlogRoot(home), 'ferret-20260101T000000Z-00000000-0000-4000-8000-000000000000'))
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, CHIMERA_HOME: home, ...env }
    if (!('OTTER_SHARE_URL' in env)) delete childEnv.OTTER_SHARE_URL
    execFile(
      process.execPath,
      [CLI_BUNDLE, ...args],
      { env: childEnv, timeout: 20_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr })
      },
    )
  })
}

describe('--help on each new command', () => {
  const commands = [
    ['otter', 'sessions'],
    ['otter', 'sessions', 'list'],
    ['otter', 'sessions', 'show'],
    ['otter', 'share'],
    ['mink'],
    ['mink', 'runs'],
    ['mink', 'runs', 'cost'],
  ]
  for (const c of commands) {
    it(`chimera ${c.join(' ')} --help`, async () => {
      const r = await cli([...c, '--help'])
      expect(r.code).toBe(0)
      expect(r.stderr).toBe('')
      expect(r.stdout).toMatch(/USAGE/)
    })
  }
})

describe('chimera otter sessions', () => {
  it('list --json is {"sessions": [...]}, newest first, with limit and model filters', async () => {
    const r = await cli(['otter', 'sessions', 'list', '--json'])
    expect(r.code).toBe(0)
    const body = JSON.parse(r.stdout) as { sessions: { session_id: string; model: string }[] }
    expect(body.sessions.map((s) => s.session_id).sort()).toEqual([...ids].sort())
    const limited = JSON.parse((await cli(['otter', 'sessions', 'list', '--json', '--limit', '2'])).stdout)
    expect(limited.sessions).toHaveLength(2)
    expect(JSON.parse((await cli(['otter', 'sessions', 'list', '--json', '--model', 'nope'])).stdout)).toEqual({
      sessions: [],
    })
    expect(JSON.parse((await cli(['otter', 'sessions', 'list', '--json', '--since', '2999-01-01'])).stdout)).toEqual({
      sessions: [],
    })
  })

  it('list prints a table of the sessions', async () => {
    const r = await cli(['otter', 'sessions', 'list'])
    expect(r.code).toBe(0)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^SESSION\s+STARTED\s+MODEL\s+RESULT\s+COST\s+STEPS\s+TOOLS\s+PROMPT$/)
    expect(lines).toHaveLength(5)
    expect(r.stdout).toContain('!say first <b>bold</b>')
  })

  it('show --json is the session detail (summary and every event)', async () => {
    const r = await cli(['otter', 'sessions', 'show', ids[0]!, '--json'])
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(
      JSON.parse(JSON.stringify(await readSessionDetail(openEventStore(home), ids[0]!))),
    )
    const human = await cli(['otter', 'sessions', 'show', ids[2]!])
    expect(human.stdout).toMatch(/^session {4}/)
    expect(human.stdout).toMatch(/result {5}failed/)
    expect(human.stdout).toMatch(/^title {6}The broken one$/m)
    expect(human.stdout).toMatch(/\berror\s+broken/)
  })

  it('an unknown session is an error (exit 1)', async () => {
    const r = await cli(['otter', 'sessions', 'show', 'otter-20260101T000000Z-00000000-0000-4000-8000-000000000001'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^error: session not found/)
  })
})

describe('chimera otter share', () => {
  it('--sink stdout prints the rendered transcript, nothing else', async () => {
    const r = await cli(['otter', 'share', ids[0]!, '--sink', 'stdout', '--format', 'md'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(renderTranscript(await readSessionDetail(openEventStore(home), ids[0]!), 'md').body)
  })

  it('the file sink is the default without OTTER_SHARE_URL: it prints the path it wrote', async () => {
    const r = await cli(['otter', 'share', ids[0]!])
    expect(r.code).toBe(0)
    const path = r.stdout.trim()
    expect(path.startsWith(join(home, 'shares', ids[0]!))).toBe(true)
    expect(readFileSync(path, 'utf8')).toMatch(/^<!doctype html>/)
  })

  it('the http sink posts to --url or OTTER_SHARE_URL; an unreachable collector exits 1', async () => {
    const got: string[] = []
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        got.push(`${req.headers['content-type']} ${body.length}`)
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end('{"ok":true}')
      })
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/shares`
    try {
      const r = await cli(['otter', 'share', ids[1]!, '--sink', 'http', '--format', 'json', '--url', url])
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout)).toEqual({ sink: 'http', format: 'json', url, status_code: 201, reply: { ok: true } })
      const byEnv = await cli(['otter', 'share', ids[1]!], { OTTER_SHARE_URL: url })
      expect(JSON.parse(byEnv.stdout)).toMatchObject({ sink: 'http', format: 'html', status_code: 201 })
      expect(got.map((g) => g.split(' ')[0])).toEqual(['application/json', 'text/html;'])
    } finally {
      server.close()
      await once(server, 'close')
    }
    const down = await cli(['otter', 'share', ids[1]!, '--sink', 'http', '--url', url])
    expect(down.code).toBe(1)
    expect(down.stdout).toBe('')
    expect(down.stderr).toMatch(/^error: could not reach the collector at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/)
  })
})

describe('chimera mink runs', () => {
  it('runs --json and runs cost --format json are the GET /runs and GET /runs/cost bodies', async () => {
    const list = await cli(['mink', 'runs', '--json'])
    expect(list.code).toBe(0)
    expect(JSON.parse(list.stdout)).toEqual(await listRuns(openEventStore(home)))
    expect(JSON.parse(list.stdout)).toMatchObject({ total_runs: 4, skipped_dirs: 1 })
    const cost = await cli([
      'mink',
      'runs',
      'cost',
      '--format',
      'json',
      '--model',
      'OFF',
      '--limit',
      '3',
      '--since',
      '30d',
    ])
    expect(cost.code).toBe(0)
    const body = JSON.parse(cost.stdout)
    expect(body).toMatchObject({ total_runs: 3, filters: { since: '30d', model: 'OFF' } })
    expect(body.by_run.map((r: { run_id: string }) => r.run_id)).toEqual(
      (await costRollup(openEventStore(home), { limit: 3 })).by_run.map((r) => r.run_id),
    )
  })

  it('tables by default, with the sources and the skipped directory', async () => {
    const list = await cli(['mink', 'runs'])
    expect(list.stdout).toMatch(/^RUN\s+STARTED\s+SOURCE/)
    expect(list.stdout).toMatch(/\bmink\s+offline\b/)
    expect(list.stdout.trimEnd().split('\n').slice(-2)).toEqual(['4 runs', '(1 damaged session directory skipped)'])
    const cost = await cli(['mink', 'runs', 'cost'])
    expect(cost.stdout).toMatch(
      /^RUNS\s+OK\s+FAILED\s+COST\s+TOKENS\s+INPUT\s+OUTPUT\s+CACHE\s+AVG\s+P50\s+P95\n4\s+3\s+1\s+\$0\s/,
    )
    expect(cost.stdout).toMatch(/\nMODEL\s+RUNS\s+COST\s+TOKENS\noffline\s+4\s+\$0\s/)
  })
})

describe('usage errors: exit 2, one line on stderr, nothing on stdout', () => {
  const cases: [string[], RegExp][] = [
    [['mink', 'runs', '--since', 'yesterday'], /^error: --since: invalid since value "yesterday"/],
    [['mink', 'runs', '--limit', '0'], /^error: --limit must be an integer from 1/],
    [
      ['mink', 'runs', 'cost', '--format', 'xml'],
      /^error: chimera mink runs cost: --format must be one of table, json/,
    ],
    [['mink', 'runs', '--bogus'], /^error: chimera mink runs: unknown option --bogus/],
    [['mink', 'walk'], /^error: unknown command "mink walk"/],
    [['otter', 'sessions', 'list', '--limit', 'many'], /^error: --limit must be an integer/],
    [['otter', 'sessions', 'list', '--since', '2026-02-30'], /^error: --since: invalid since value/],
    [['otter', 'sessions', 'show'], /^error: Missing required positional argument: ID/],
    [['otter', 'share', 'x', '--format', 'pdf'], /^error: chimera otter share: --format must be one of html, md, json/],
    [
      ['otter', 'share', 'x', '--sink', 'email'],
      /^error: chimera otter share: --sink must be one of file, http, stdout/,
    ],
    [['otter', 'share', 'x', '--timeout', '0'], /^error: --timeout must be a number of seconds/],
  ]
  for (const [args, message] of cases) {
    it(args.join(' '), async () => {
      const r = await cli(args)
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    })
  }

  it('the http sink without a URL is a usage error', async () => {
    const r = await cli(['otter', 'share', ids[0]!, '--sink', 'http'])
    expect([r.code, r.stdout]).toEqual([2, ''])
    expect(r.stderr).toMatch(/^error: the http sink needs a url \(or OTTER_SHARE_URL\)/)
  })

  it('an event log that cannot be read is exit 1', async () => {
    const bad = join(base, 'bad-home')
    mkdirSync(bad)
    writeFileSync(join(bad, 'eventlog'), 'not a directory')
    const r = await cli(['mink', 'runs', 'cost'], { CHIMERA_HOME: bad })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^error: cannot read the event log/)
    expect(existsSync(join(bad, 'eventlog'))).toBe(true)
  })
})
