/**
 * Bash: output and exit codes, progress streaming in order, the timeout and cancellation
 * killing the whole process group (grandchildren included, checked with kill(-pgid, 0), on plain
 * bash without bubblewrap so the pids are the host's), output capping, and the bubblewrap
 * sandbox basics: writes only in the workspace in workspace-write, none in read-only, no
 * network; without bwrap the confined modes refuse to run unless running unconfined was allowed,
 * which warns. Escapes, visibility and the environment: bash-sandbox.test.ts; orphans:
 * bash-orphans.test.ts.
 */
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { bashTool, MAX_BASH_OUTPUT_CHARS, type BashData } from './bash.ts'
import { groupAlive } from '../platform/supervisor.ts'
import { findBwrap } from './sandbox.ts'
import {
  hideBwrap,
  recordingContext,
  tempWorkspace,
  withoutBwrap,
  type RecordingContext,
  type TempWorkspace,
} from './fixtures/workspace.ts'
import type { SandboxMode, ToolOutcome } from './types.ts'

const hasBwrap = findBwrap() !== undefined

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const bash = (command: string, sandbox: SandboxMode = 'danger-full-access', timeout_ms?: number) => {
  const ctx = recordingContext(ws.cwd, sandbox)
  return { ctx, done: bashTool.run(timeout_ms === undefined ? { command } : { command, timeout_ms }, ctx) }
}
const dataOf = (r: ToolOutcome): BashData => r.data as BashData
const text = (r: ToolOutcome): string => (r.ok ? r.output : r.error)

/**
 * True once no process with this pid (or in this group) exists. Polls for up to 10 s: a killed
 * orphan stays a zombie until init reaps it, which some container inits do only every ~2 s.
 */
async function gone(pid: number, group: boolean): Promise<boolean> {
  const until = Date.now() + 10_000
  for (;;) {
    try {
      process.kill(group ? -pid : pid, 0)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ESRCH') return true
      throw e
    }
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Wait until the progress log contains a line of pids printed by the command. */
async function pidsFromProgress(ctx: RecordingContext): Promise<number[]> {
  const until = Date.now() + 5000
  while (Date.now() < until) {
    const out = ctx.progressLog.map((c) => c.stdout ?? '').join('')
    const m = /PIDS ([\d ]+)\n/.exec(out)
    if (m?.[1]) return m[1].trim().split(/\s+/).map(Number)
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error('the command never printed its pids')
}

describe('Bash basics', () => {
  it('runs in the working directory and returns the output with exit code 0', async () => {
    const r = await bash('pwd; echo hello').done
    expect(r).toMatchObject({
      ok: true,
      output: `${ws.cwd}\nhello\n`,
      data: { exitCode: 0, signal: null, timedOut: false, cancelled: false },
    })
  })

  it('reports a non-zero exit as a failure with the code and the output', async () => {
    const r = await bash('echo out; echo err >&2; exit 3').done
    expect(r.ok).toBe(false)
    expect(text(r)).toMatch(/^command exited with code 3\n/)
    expect(text(r)).toContain('out\n')
    expect(text(r)).toContain('err\n')
    expect(dataOf(r).exitCode).toBe(3)
  })

  it('says (no output) for a silent success', async () => {
    expect(await bash('true').done).toMatchObject({ ok: true, output: '(no output)' })
  })

  it('streams stdout and stderr as progress, in order', async () => {
    const { ctx, done } = bash('echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three')
    await done
    expect(ctx.progressLog).toEqual([{ stdout: 'one\n' }, { stderr: 'two\n' }, { stdout: 'three\n' }])
  })

  it('keeps only the tail of long output and says it was truncated', async () => {
    const r = await bash(`head -c 300000 /dev/zero | tr '\\0' x; echo END`).done
    expect(r.ok).toBe(true)
    expect(dataOf(r).truncated).toBe(true)
    const out = text(r)
    expect(out).toMatch(/^\[output truncated: showing the last 102400 of 300004 characters\]\n/)
    expect(out.endsWith('xEND\n')).toBe(true)
    expect(out.length).toBeLessThan(MAX_BASH_OUTPUT_CHARS + 200)
  })

  it('does not start when already cancelled', async () => {
    const ctx = recordingContext(ws.cwd, 'danger-full-access')
    ctx.controller.abort()
    const r = await bashTool.run({ command: `touch ${join(ws.cwd, 'ran')}` }, ctx)
    expect(r).toMatchObject({ ok: false, error: 'command cancelled before it started' })
    expect(existsSync(join(ws.cwd, 'ran'))).toBe(false)
  })

  it('fails cleanly when the working directory is missing or not a directory', async () => {
    ws.write({ 'file.txt': '' })
    for (const cwd of [join(ws.cwd, 'missing'), join(ws.cwd, 'file.txt')]) {
      const r = await bashTool.run({ command: 'echo hi' }, recordingContext(cwd, 'danger-full-access'))
      expect(r.ok, cwd).toBe(false)
    }
  })

  it('permissionKey is the trimmed command', () => {
    expect(bashTool.permissionKey({ command: '  ls -la \n' }, { cwd: '/w' })).toBe('ls -la')
  })
})

describe('Bash process groups (plain bash, no bubblewrap)', () => {
  let restore: () => void
  beforeEach(() => {
    restore = hideBwrap()
  })
  afterEach(() => restore())

  it('kills a command that never exits when the timeout fires, leaving no process', async () => {
    const started = Date.now()
    const r = await bash('sleep 30; echo never', 'danger-full-access', 300).done
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r.ok).toBe(false)
    expect(text(r)).toMatch(/^command timed out after 300 ms/)
    expect(text(r)).not.toContain('never')
    const d = dataOf(r)
    expect(d.timedOut).toBe(true)
    expect(d.pid).toBeTypeOf('number')
    expect(await gone(d.pid as number, true)).toBe(true)
  })

  it('cancel kills the child and the grandchild it spawned', async () => {
    const { ctx, done } = bash('sleep 30 & echo "PIDS $$ $!"; sleep 30')
    const [pgid, grandchild] = await pidsFromProgress(ctx)
    expect(groupAlive(pgid as number)).toBe(true)
    const started = Date.now()
    ctx.controller.abort()
    const r = await done
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r).toMatchObject({ ok: false, data: { cancelled: true } })
    expect(text(r)).toMatch(/^command cancelled/)
    expect(await gone(pgid as number, true)).toBe(true)
    expect(await gone(grandchild as number, false)).toBe(true)
  })

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const { ctx, done } = bash(`trap '' TERM; echo "PIDS $$"; sleep 30 & wait`)
    const [pgid] = await pidsFromProgress(ctx)
    ctx.controller.abort()
    const started = Date.now()
    const r = await done
    expect(Date.now() - started).toBeLessThan(6000)
    expect(dataOf(r).cancelled).toBe(true)
    expect(await gone(pgid as number, true)).toBe(true)
  })

  it('does not wait for background jobs after the command exits, and kills them', async () => {
    const started = Date.now()
    const r = await bash('sleep 30 & echo "PIDS $$ $!"').done
    expect(Date.now() - started).toBeLessThan(5000)
    expect(r.ok).toBe(true)
    const [pgid, bg] = /PIDS (\d+) (\d+)/.exec(text(r))?.slice(1).map(Number) ?? []
    expect(await gone(pgid as number, true)).toBe(true)
    expect(await gone(bg as number, false)).toBe(true)
  })
})

describe('Bash sandbox (bubblewrap)', () => {
  let server: Server
  let port = 0
  beforeEach(async () => {
    server = createServer((s) => s.end())
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
    const addr = server.address()
    port = typeof addr === 'object' && addr ? addr.port : 0
  })
  afterEach(async () => {
    await new Promise<void>((r) => server.close(() => r()))
  })

  it.skipIf(!hasBwrap)('workspace-write can write in the cwd but nowhere else', async () => {
    const r = await bash('touch inside.txt && echo wrote').done
    expect(r.ok).toBe(true)
    const inside = await bash('touch inside.txt && echo wrote', 'workspace-write').done
    expect(inside).toMatchObject({ ok: true, output: 'wrote\n', data: { sandboxed: true } })
    expect(existsSync(join(ws.cwd, 'inside.txt'))).toBe(true)
    const usr = await bash('touch /usr/chimera-sandbox-test', 'workspace-write').done
    expect(usr.ok).toBe(false)
    expect(text(usr)).toMatch(/Read-only file system/)
    expect(existsSync('/usr/chimera-sandbox-test')).toBe(false)
    const out = await bash(`touch ${join(ws.outside, 'x')}`, 'workspace-write').done
    expect(out.ok).toBe(false)
    expect(existsSync(join(ws.outside, 'x'))).toBe(false)
  })

  it.skipIf(!hasBwrap)('read-only forbids writing even in the cwd', async () => {
    ws.write({ 'existing.txt': 'keep' })
    const r = await bash('cat existing.txt; touch new.txt', 'read-only').done
    expect(r.ok).toBe(false)
    expect(text(r)).toContain('keep')
    expect(text(r)).toMatch(/Read-only file system/)
    expect(existsSync(join(ws.cwd, 'new.txt'))).toBe(false)
  })

  it.skipIf(!hasBwrap)('has no network in the confined modes, unlike danger-full-access', async () => {
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`
    expect(await bash(probe, 'danger-full-access').done).toMatchObject({ ok: true, output: 'connected\n' })
    for (const mode of ['workspace-write', 'read-only'] as const) {
      const r = await bash(probe, mode).done
      expect(r.ok, mode).toBe(false)
      expect(text(r)).not.toContain('connected')
    }
  })

  it.skipIf(!hasBwrap)('the timeout also kills a sandboxed command', async () => {
    const started = Date.now()
    const r = await bash('sleep 30; echo never', 'workspace-write', 300).done
    expect(Date.now() - started).toBeLessThan(5000)
    expect(dataOf(r)).toMatchObject({ timedOut: true, sandboxed: true })
    expect(await gone(dataOf(r).pid as number, true)).toBe(true)
  })

  it('refuses the confined modes without bwrap, naming the package, and starts nothing', async () => {
    const restore = hideBwrap()
    onTestFinished(restore)
    for (const mode of ['workspace-write', 'read-only'] as const) {
      const { ctx, done } = bash(`touch ${join(ws.cwd, 'ran')}`, mode)
      const r = await done
      expect(r.ok, mode).toBe(false)
      expect(text(r)).toMatch(/bubblewrap \(bwrap\) is not installed\. Install the "bubblewrap" package/)
      expect(ctx.notices).toEqual([])
    }
    expect(existsSync(join(ws.cwd, 'ran'))).toBe(false)
  })

  it('runs unconfined, warning every client, when the user allowed it', async () => {
    const ctx = recordingContext(ws.cwd, 'workspace-write')
    ctx.allowUnconfined = true
    const r = await withoutBwrap(() => bashTool.run({ command: 'echo hi' }, ctx))
    expect(r).toMatchObject({ ok: true, output: 'hi\n', data: { sandboxed: false } })
    expect(ctx.notices).toEqual([
      {
        level: 'warning',
        text: 'bubblewrap (bwrap) is not installed and --allow-unconfined was given: Bash runs UNCONFINED, without the workspace-write sandbox',
      },
    ])
  })

  it('danger-full-access says nothing, with or without bwrap (a PID namespace only when bwrap exists)', async () => {
    const { ctx, done } = bash('echo hi')
    expect(await done).toMatchObject({ ok: true, data: { sandboxed: hasBwrap } })
    const plain = recordingContext(ws.cwd, 'danger-full-access')
    expect(await withoutBwrap(() => bashTool.run({ command: 'echo hi' }, plain))).toMatchObject({
      ok: true,
      data: { sandboxed: false },
    })
    expect([...ctx.notices, ...plain.notices]).toEqual([])
  })
})
