/**
 * Real disks that fail, through the real CLI: a read-only CHIMERA_HOME (a read-only bind mount:
 * these machines run as root, and root ignores permission bits) is one clear line at start-up,
 * and a tiny tmpfs home that fills up while Bash streams output neither ends the process nor
 * leaves temp files behind; the log stays an exact prefix, and after space is freed the session
 * goes on. Needs root and mount(8); skipped, saying why, where they are missing.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { FileEventStore } from '../store/file-store.ts'

const temp = tempDirs()
const mounted: string[] = []

function tryMount(args: string[]): boolean {
  const r = spawnSync('mount', args, { encoding: 'utf8' })
  return r.status === 0
}

const canMount = (() => {
  if (process.getuid?.() !== 0) return false
  const probe = temp.make('mount-probe-')
  const ok = tryMount(['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe])
  if (ok) spawnSync('umount', [probe])
  return ok
})()

afterAll(() => {
  for (const m of mounted.reverse()) spawnSync('umount', ['-l', m])
  temp.cleanup()
})

function mountTmpfs(size: string): string {
  const dir = temp.make('tiny-home-')
  if (!tryMount(['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])) throw new Error('mount tmpfs failed')
  mounted.push(dir)
  return dir
}

function mountReadOnly(): string {
  const dir = temp.make('ro-home-')
  mkdirSync(join(dir, 'eventlog'))
  if (!tryMount(['--bind', dir, dir])) throw new Error('bind mount failed')
  mounted.push(dir)
  if (!tryMount(['-o', 'remount,ro,bind', dir])) throw new Error('remount ro failed')
  return dir
}

describe.skipIf(!canMount)('disk faults (root, mount)', () => {
  let roHome = ''
  beforeAll(() => {
    roHome = mountReadOnly()
  })

  it('a read-only CHIMERA_HOME: `code --mode rpc` says so in one line on stderr, no stack trace, nothing on stdout, exit 1', () => {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, 'code', '--mode', 'rpc'], {
      input: '',
      encoding: 'utf8',
      env: { ...process.env, CHIMERA_HOME: roHome },
      timeout: 20_000,
    })
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trim().split('\n')
    expect(lines).toEqual([`error: CHIMERA_HOME ${roHome} cannot hold event logs (read-only file system, EROFS)`])
  })

  it('a read-only CHIMERA_HOME: `otter serve` (HTTP) says so in one line (no warning first, no ENOENT), exit 1', () => {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0'], {
      input: '',
      encoding: 'utf8',
      env: { ...process.env, CHIMERA_HOME: roHome, CHIMERA_LOG_LEVEL: 'info' },
      timeout: 20_000,
    })
    expect(r.status).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toEqual([
      `error: CHIMERA_HOME ${roHome} cannot hold event logs (read-only file system, EROFS); the HTTP server cannot record itself there`,
    ])
  })

  it('a read-only CHIMERA_HOME: `otter serve --acp` warns in one line and still answers', () => {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--acp'], {
      input: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n',
      encoding: 'utf8',
      env: { ...process.env, CHIMERA_HOME: roHome, CHIMERA_LOG_LEVEL: 'warn' },
      timeout: 20_000,
    })
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ id: 1, result: { protocolVersion: 1 } })
    const warnings = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('cannot hold event logs'))
    expect(warnings).toHaveLength(1)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('a tiny tmpfs home fills up during a streaming Bash call: no exit 1, no temp file left, the log is a prefix, and the session goes on after space is freed', async () => {
    const home = mountTmpfs('160k')
    const ws = temp.make('disk-ws-')
    // Leave a little room, then fill the rest with a file we can delete to "recover".
    const child = spawn(
      process.execPath,
      [CLI_BUNDLE, 'code', '--mode', 'rpc', '--sandbox', 'danger-full-access', '--cwd', ws],
      {
        env: { ...process.env, CHIMERA_HOME: home },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
    const responses = (): { id: string; success: boolean; error: string }[] =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((m: { type?: string }) => m.type === 'response')
    const waitFor = async (id: string): Promise<{ success: boolean; error: string }> => {
      for (let i = 0; i < 600; i++) {
        const r = responses().find((m) => m.id === id)
        if (r) return r
        await new Promise((res) => setTimeout(res, 50))
      }
      throw new Error(`no response ${id}; stdout=${out.slice(-500)} stderr=${err.slice(-500)}`)
    }
    child.stdin.write('{"type":"prompt","id":"warm","message":"!say ready"}\n')
    expect((await waitFor('warm')).success).toBe(true)
    // Fill the disk, then stream output that cannot all be logged.
    execFileSync('sh', ['-c', `dd if=/dev/zero of=${join(home, 'filler')} bs=4k 2>/dev/null || true`])
    child.stdin.write(
      `${JSON.stringify({ type: 'prompt', id: 'full', message: '!call Bash {"command":"seq 1 200000"}' })}\n`,
    )
    const full = await waitFor('full')
    expect(full.success).toBe(false)
    expect(full.error).toMatch(/ENOSPC|no space left/)
    expect(child.exitCode).toBeNull()
    // Space comes back: the session goes on.
    rmSync(join(home, 'filler'))
    child.stdin.write('{"type":"prompt","id":"after","message":"!say back again"}\n')
    expect((await waitFor('after')).success).toBe(true)
    child.stdin.end()
    const code = await new Promise<number | null>((res) => child.on('exit', (c) => res(c)))
    expect(code).toBe(0)
    expect(err).not.toMatch(/\n\s+at /)
    // No temp file left anywhere in the session directory; the log is a contiguous prefix.
    const root = join(home, 'eventlog')
    const [id] = readdirSync(root).filter((n) => n.startsWith('otter-'))
    expect(readdirSync(join(root, id!)).filter((n) => n.endsWith('.tmp'))).toEqual([])
    const loaded = await new FileEventStore({ root }).load(id!)
    expect(loaded?.repaired).toBe(false)
    const events = loaded!.events
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(events.at(-1)).toMatchObject({ type: 'agent_result', data: { output: 'back again' } })
    expect(existsSync(join(home, 'filler'))).toBe(false)
  }, 60_000)
})
