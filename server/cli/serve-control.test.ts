/**
 * `chimera otter serve status` / `serve stop` end to end, on real processes (docs/http.md
 * "Managing backgrounded servers", "Concurrency safety"): the pidfile written on bind with the
 * document's schema (the token only as its SHA-256), the status lines, a second server on the
 * same port refused at once naming the PID, stale pidfile takeover, `stop` by port / all /
 * ambiguous (exit 2), SIGTERM first and SIGKILL only after `--serve-timeout`, exit 1 when a
 * process survives both, and a SIGTERM'd server ending its SSE streams with `end` and removing
 * its pidfile.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { basename, dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const temp = tempDirs()
const children: ChildProcess[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

interface Server {
  child: ChildProcess
  url: string
  port: number
  stderr(): string
  exit: Promise<number | null>
}

async function until<T>(get: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = get()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

function launch(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    env: { ...process.env, CHIMERA_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  child.stdout!.resume()
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return { child, stderr: () => err, exit }
}

async function serve(home: string, extra: string[] = [], env: Record<string, string> = {}): Promise<Server> {
  const p = launch(['otter', 'serve', '--port', '0', ...extra], { CHIMERA_HOME: home, ...env })
  const url = await until(
    () => /listening on (https?:\/\/127\.0\.0\.1:\d+)/.exec(p.stderr())?.[1],
    `the start-up line; stderr: ${p.stderr()}`,
  )
  return { ...p, url, port: Number(new URL(url).port) }
}

/**
 * `chimera otter serve <sub> ...` run to completion. Asynchronously: the servers are this
 * process's children, and it must stay free to collect them when they exit.
 */
function cli(
  home: string,
  args: string[],
  uid?: number,
  bundle = CLI_BUNDLE,
  node = process.execPath,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(node, [bundle, 'otter', 'serve', ...args], {
    env: { ...process.env, CHIMERA_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(uid !== undefined ? { uid, gid: uid } : {}),
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

/** Directories 0755 and files 0644 under `dir`, whatever the umask or the checkout's modes. */
function chmodTree(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      chmodSync(p, 0o755)
      chmodTree(p)
    } else chmodSync(p, 0o644)
  }
}

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

const pidfile = (home: string, port: number): string => join(home, 'run', `otter-${port}.pid`)

describe('serve status and stop', () => {
  it('records the server, lists it, refuses a second one on its port, and stops it with SIGTERM', async () => {
    const home = temp.make('serve-ctl-')
    const a = await serve(home, ['--auth-token', 's3cret'])
    const record = JSON.parse(readFileSync(pidfile(home, a.port), 'utf8'))
    expect(record).toEqual({
      pid: a.child.pid,
      host: '127.0.0.1',
      port: a.port,
      prefix: 'otter',
      auth_token_hash: `sha256:${createHash('sha256').update('s3cret').digest('hex')}`,
      started_at: expect.any(Number),
      scheme: 'http',
    })
    expect(readFileSync(pidfile(home, a.port), 'utf8')).not.toContain('s3cret')

    const status = await cli(home, ['status'])
    expect(status.code).toBe(0)
    expect(status.stdout).toBe(
      `otter port=${a.port} pid=${a.child.pid} alive=yes scheme=http auth=yes ${pidfile(home, a.port)}\n`,
    )

    // A second server on the same port fails fast, naming the holder; the first keeps its pidfile.
    const b = launch(['otter', 'serve', '--port', String(a.port)], { CHIMERA_HOME: home })
    expect(await b.exit).toBe(1)
    expect(
      b
        .stderr()
        .trim()
        .split('\n')
        .filter((l) => !/ INFO /.test(l)),
    ).toEqual([`error: chimera otter serve: already running on port ${a.port}, PID ${a.child.pid}`])
    expect(JSON.parse(readFileSync(pidfile(home, a.port), 'utf8')).pid).toBe(a.child.pid)

    const stop = await cli(home, ['stop'])
    expect(stop.code).toBe(0)
    expect(stop.stdout).toBe(`otter port=${a.port} pid=${a.child.pid} stopped (SIGTERM)\n`)
    expect(await a.exit).toBe(0)
    expect(existsSync(pidfile(home, a.port))).toBe(false)
    // Idempotent: nothing left to stop is success.
    expect(await cli(home, ['stop'])).toMatchObject({ code: 0, stdout: '' })
    expect(await cli(home, ['status'])).toMatchObject({ code: 0, stdout: '' })
  }, 40_000)

  it('a port taken by another program is one line naming the port, exit 1, no stack trace', async () => {
    const home = temp.make('serve-inuse-')
    const other = createServer()
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    const port = (other.address() as { port: number }).port
    try {
      const s = launch(['otter', 'serve', '--port', String(port)], { CHIMERA_HOME: home })
      expect(await s.exit).toBe(1)
      expect(
        s
          .stderr()
          .trim()
          .split('\n')
          .filter((l) => !/ INFO /.test(l)),
      ).toEqual([`error: port ${port} on 127.0.0.1 is already in use`])
      expect(existsSync(pidfile(home, port))).toBe(false)
    } finally {
      await new Promise((r) => other.close(r))
    }
  }, 40_000)

  it('takes over a stale pidfile; status flags it; stop reaps it', async () => {
    const home = temp.make('serve-stale-')
    const port = await freePort()
    mkdirSync(join(home, 'run'), { recursive: true })
    // A PID that cannot be alive (beyond pid_max), as a crashed server would leave behind.
    const stale = {
      pid: 2 ** 30,
      host: '127.0.0.1',
      port,
      prefix: 'otter',
      auth_token_hash: null,
      started_at: 1,
      scheme: 'http',
    }
    writeFileSync(pidfile(home, port), JSON.stringify(stale))
    expect((await cli(home, ['status'])).stdout).toBe(
      `otter port=${port} pid=${2 ** 30} alive=no (stale) scheme=http auth=no ${pidfile(home, port)}\n`,
    )
    const s = launch(['otter', 'serve', '--port', String(port)], { CHIMERA_HOME: home })
    await until(() => (/listening on/.test(s.stderr()) ? true : undefined), 'the start-up line')
    expect(JSON.parse(readFileSync(pidfile(home, port), 'utf8')).pid).toBe(s.child.pid)
    s.child.kill('SIGTERM')
    expect(await s.exit).toBe(0)
    expect(existsSync(pidfile(home, port))).toBe(false)

    writeFileSync(pidfile(home, port), JSON.stringify(stale))
    expect(await cli(home, ['stop', '--port', String(port)])).toMatchObject({
      code: 0,
      stdout: `otter port=${port} pid=${2 ** 30} stale pidfile removed\n`,
    })
    expect(existsSync(pidfile(home, port))).toBe(false)
  }, 40_000)

  it('several servers: stop alone is a usage error (exit 2); --port stops one, --all the rest', async () => {
    const home = temp.make('serve-many-')
    const a = await serve(home)
    const b = await serve(home)
    const ambiguous = await cli(home, ['stop'])
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toMatch(/2 otter servers are recorded .*disambiguate with --port N or --all/)
    expect((await cli(home, ['stop', '--port', String(a.port), '--all'])).code).toBe(2)
    expect((await cli(home, ['stop', '--serve-timeout', 'soon'])).code).toBe(2)
    expect(await cli(home, ['stop', '--port', String(b.port)])).toMatchObject({
      code: 0,
      stdout: `otter port=${b.port} pid=${b.child.pid} stopped (SIGTERM)\n`,
    })
    expect(await b.exit).toBe(0)
    expect(a.child.exitCode).toBeNull()
    expect(await cli(home, ['stop', '--all'])).toMatchObject({
      code: 0,
      stdout: `otter port=${a.port} pid=${a.child.pid} stopped (SIGTERM)\n`,
    })
    expect(await a.exit).toBe(0)
  }, 40_000)

  it('SIGKILL only after --serve-timeout when SIGTERM is ignored', async () => {
    const home = temp.make('serve-kill-')
    mkdirSync(join(home, 'run'), { recursive: true })
    // A node process that ignores SIGTERM, recorded as a server.
    const stubborn = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => console.log('TERM')); console.log('ready'); setInterval(() => {}, 1000)"],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    )
    children.push(stubborn)
    let out = ''
    stubborn.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
    await until(() => (out.includes('ready') ? true : undefined), 'the stub')
    const port = 40001
    writeFileSync(
      pidfile(home, port),
      JSON.stringify({
        pid: stubborn.pid,
        host: '127.0.0.1',
        port,
        prefix: 'otter',
        auth_token_hash: null,
        started_at: 2,
        scheme: 'http',
      }),
    )
    const killed = new Promise<NodeJS.Signals | null>((r) => stubborn.on('exit', (_c, sig) => r(sig)))
    const r = await cli(home, ['stop', '--port', String(port), '--serve-timeout', '0.3'])
    expect(r).toMatchObject({
      code: 0,
      stdout: `otter port=${port} pid=${stubborn.pid} killed (SIGKILL after 0.3 s)\n`,
    })
    expect(out).toContain('TERM') // SIGTERM came first
    expect(await killed).toBe('SIGKILL')
    expect(existsSync(pidfile(home, port))).toBe(false)
  }, 40_000)

  it.skipIf(process.getuid?.() !== 0)(
    'exit 1 when a process survives both signals (stop run by a user who may not signal it)',
    async () => {
      const home = temp.make('serve-eperm-')
      chmodSync(home, 0o755)
      mkdirSync(join(home, 'run'), { recursive: true, mode: 0o777 })
      chmodSync(join(home, 'run'), 0o777)
      const owned = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
      children.push(owned)
      const port = 40002
      writeFileSync(
        pidfile(home, port),
        JSON.stringify({
          pid: owned.pid,
          host: '127.0.0.1',
          port,
          prefix: 'otter',
          auth_token_hash: null,
          started_at: 3,
          scheme: 'http',
        }),
      )
      chmodSync(pidfile(home, port), 0o644)
      // The checkout may sit where other users cannot enter (a clone under /root, a mktemp -d
      // directory), and so may the Node binary (the suite's Node 24 lives in the checkout): the
      // CLI runs as nobody from copies of the bundle and of Node in a world-readable directory.
      const shared = temp.make('serve-eperm-cli-')
      chmodSync(shared, 0o755)
      cpSync(dirname(CLI_BUNDLE), shared, { recursive: true })
      cpSync(process.execPath, join(shared, 'node'))
      chmodTree(shared)
      chmodSync(join(shared, 'node'), 0o755)
      const r = await cli(
        home,
        ['stop', '--port', String(port), '--serve-timeout', '0.1'],
        65534,
        join(shared, basename(CLI_BUNDLE)),
        join(shared, 'node'),
      )
      expect(r).toMatchObject({
        code: 1,
        stdout: `otter port=${port} pid=${owned.pid} still running after SIGTERM and SIGKILL\n`,
      })
      expect(owned.exitCode).toBeNull()
      expect(existsSync(pidfile(home, port))).toBe(true)
    },
    40_000,
  )

  it('a SIGTERM ends open SSE streams with a final end frame and removes the pidfile', async () => {
    const home = temp.make('serve-sse-')
    const s = await serve(home)
    const created = (await (await fetch(`${s.url}/session`, { method: 'POST' })).json()) as { session_id: string }
    const res = await fetch(`${s.url}/session/${created.session_id}/events`)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    const read = (async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        text += value
      }
    })()
    await until(() => (text.includes(': open') ? true : undefined), 'the stream to open')
    expect(await cli(home, ['stop'])).toMatchObject({ code: 0 })
    await read
    expect(text).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":false\}\n\n$/)
    expect(await s.exit).toBe(0)
    expect(existsSync(pidfile(home, s.port))).toBe(false)
  }, 40_000)
})
