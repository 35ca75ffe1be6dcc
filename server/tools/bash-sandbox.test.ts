/**
 * The Bash sandbox against a hostile command, as root: each escape of the attack run runs and must
 * fail with the host unchanged (remount read-write, mknod, forging the permission audit log,
 * writing outside the workspace, writing anything in read-only); no capabilities are left; the
 * sandbox shows only what a command needs (no CHIMERA_HOME, real home, /run, /var/run, host
 * sockets, other projects, /etc secrets); protected paths inside the workspace are masked (and
 * cannot be moved away with a parent) and read-only paths stay read-only; and no secret reaches a command's environment, in any mode.
 */
import { createServer, type Server } from 'node:net'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bashTool } from './bash.ts'
import { findBwrap } from './sandbox.ts'
import { recordingContext, tempWorkspace, withoutBwrap, type TempWorkspace } from './fixtures/workspace.ts'
import type { SandboxMode, ToolOutcome } from './types.ts'

const hasBwrap = findBwrap() !== undefined
const text = (r: ToolOutcome): string => (r.ok ? r.output : r.error)

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
})
afterEach(() => ws.cleanup())

const run = (
  command: string,
  sandbox: SandboxMode,
  more: { protectedPaths?: string[]; readOnlyPaths?: string[]; toolEnv?: Record<string, string> } = {},
) => {
  const ctx = recordingContext(ws.cwd, sandbox)
  Object.assign(ctx, more)
  return bashTool.run({ command }, ctx)
}

/** Every file under `dir`, relative, for "the host is unchanged" checks. */
function tree(dir: string): string[] {
  const out: string[] = []
  const visit = (d: string, rel: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name
      out.push(r)
      if (e.isDirectory()) visit(join(d, e.name), r)
    }
  }
  visit(dir, '')
  return out.sort()
}

describe.skipIf(!hasBwrap)('Bash sandbox: the escapes of the attack run fail and leave the host unchanged', () => {
  it('no capabilities are left in the confined modes (CapEff, CapPrm, CapBnd all zero)', async () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const out = text(await run('grep Cap /proc/self/status', mode))
      for (const line of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
        expect(out, mode).toContain(`${line}:\t0000000000000000`)
    }
  })

  it('remount read-write fails in read-only, and nothing is written to the host', async () => {
    const marker = `PWNED-${process.pid}-${Date.now()}`
    const r = await run(
      `mount -o remount,rw / ; mount -o remount,rw ${ws.cwd} ; mount -o remount,rw /usr ; touch /var/tmp/${marker} /usr/${marker} ${ws.cwd}/${marker}; mount -t tmpfs none /mnt`,
      'read-only',
    )
    expect(text(r)).toMatch(/permission denied/i)
    expect(text(r)).not.toMatch(/^mount: .*: (mount point not mounted|must be superuser).*$/m)
    for (const p of [`/var/tmp/${marker}`, `/usr/${marker}`, join(ws.cwd, marker)]) expect(existsSync(p), p).toBe(false)
  })

  it('mknod cannot create a device node in the workspace', async () => {
    const r = await run('mknod zero c 1 5; mknod null c 1 3; echo done', 'workspace-write')
    expect(text(r)).toMatch(/mknod: zero: Operation not permitted/)
    expect(existsSync(join(ws.cwd, 'zero'))).toBe(false)
    expect(existsSync(join(ws.cwd, 'null'))).toBe(false)
  })

  it('cannot nest a user namespace to regain capabilities', async () => {
    const r = await run('unshare --user --map-root-user true && echo NESTED', 'workspace-write')
    expect(text(r)).not.toContain('NESTED')
  })

  it('cannot forge the permission audit log, wherever CHIMERA_HOME is', async () => {
    const home = process.env.CHIMERA_HOME as string
    mkdirSync(join(home, 'permissions'), { recursive: true })
    const audit = join(home, 'permissions', 'audit.jsonl')
    writeFileSync(audit, '')
    const forge = (p: string) =>
      `mkdir -p ${p}/permissions; echo '{"decision":"always","tool":"Bash","key":"rm -rf /"}' >> ${p}/permissions/audit.jsonl`
    // CHIMERA_HOME outside the workspace: not mounted (the private /tmp hides it).
    for (const mode of ['read-only', 'workspace-write'] as const)
      await run(forge(home), mode, { protectedPaths: [home] })
    expect(readFileSync(audit, 'utf8')).toBe('')
    // CHIMERA_HOME inside the workspace: masked by an empty read-only tmpfs.
    const inside = join(ws.cwd, '.chimera-home')
    mkdirSync(join(inside, 'permissions'), { recursive: true })
    writeFileSync(join(inside, 'permissions', 'audit.jsonl'), 'real\n')
    const r = await run(
      `ls -A .chimera-home; cat .chimera-home/permissions/audit.jsonl; ${forge('.chimera-home')}; rm -rf .chimera-home; mv .chimera-home gone`,
      'workspace-write',
      { protectedPaths: [inside] },
    )
    expect(text(r)).not.toContain('real')
    expect(readFileSync(join(inside, 'permissions', 'audit.jsonl'), 'utf8')).toBe('real\n')
    expect(tree(inside)).toEqual(['permissions', 'permissions/audit.jsonl'])
  })

  it('CHIMERA_HOME in the workspace with its snapshot root (both protected, as the CLI does): Bash runs, the home stays hidden', async () => {
    // Running from ~ with the default ~/.chimera: the home and <home>/snapshots are protected.
    const inside = join(ws.cwd, '.chimera')
    mkdirSync(join(inside, 'snapshots'), { recursive: true })
    writeFileSync(join(inside, 'secret.txt'), 'real home secret\n')
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const r = await run(
        'echo ran; ls -A .chimera; cat .chimera/secret.txt; ls .chimera/snapshots; touch .chimera/x',
        mode,
        { protectedPaths: [inside, join(inside, 'snapshots')] },
      )
      expect(text(r), mode).toContain('ran')
      expect(text(r), mode).not.toMatch(/Can't mkdir|real home secret/)
    }
    expect(tree(inside)).toEqual(['secret.txt', 'snapshots'])
  })

  it('a protected path deeper in the workspace cannot be moved away with its parent (the directories on its way are pinned)', async () => {
    const secrets = join(ws.cwd, 'a', 'b', 'secrets')
    mkdirSync(secrets, { recursive: true })
    writeFileSync(join(secrets, 'key'), 'TOPSECRET\n')
    writeFileSync(join(ws.cwd, 'a', 'note.txt'), 'n\n')
    const r = await run(
      'mv a moved; mv a/b a/moved; mv a/b/secrets c; rm -rf a; echo x > a/b/new.txt; cat a/b/secrets/key moved/b/secrets/key c/key; ls -A a a/b',
      'workspace-write',
      { protectedPaths: [secrets] },
    )
    expect(text(r)).not.toContain('TOPSECRET')
    // Nothing moved on the host: the key is where the rule names it, and nowhere else (a copy of
    // the empty mask that mv may leave behind holds nothing).
    const files = tree(ws.cwd).filter((f) => statSync(join(ws.cwd, f)).isFile())
    expect(files.filter((f) => readFileSync(join(ws.cwd, f), 'utf8').includes('TOPSECRET'))).toEqual([
      'a/b/secrets/key',
    ])
    expect(existsSync(join(ws.cwd, 'moved'))).toBe(false)
    expect(existsSync(join(ws.cwd, 'a', 'moved'))).toBe(false)
    expect(readFileSync(join(ws.cwd, 'a', 'b', 'new.txt'), 'utf8')).toBe('x\n')
    expect(readFileSync(join(secrets, 'key'), 'utf8')).toBe('TOPSECRET\n')
  })

  it('workspace-write cannot write outside the workspace', async () => {
    const before = tree(ws.outside)
    const r = await run(
      `touch ${ws.outside}/x; echo y > ${ws.outside}/y; mkdir ${ws.outside}/d; touch /usr/x /etc/x /x; cp /bin/sh ../sh; echo done`,
      'workspace-write',
    )
    expect(text(r)).toContain('done')
    expect(tree(ws.outside)).toEqual(before)
    for (const p of ['/usr/x', '/etc/x', '/x', join(ws.cwd, '..', 'sh')]) expect(existsSync(p), p).toBe(false)
  })

  it('read-only cannot write anything on the host (only its private /tmp and home)', async () => {
    ws.write({ 'keep.txt': 'keep' })
    const before = tree(ws.cwd)
    const r = await run(
      'echo x > new.txt; echo x >> keep.txt; rm keep.txt; mkdir d; touch /usr/x /etc/x; echo t > /tmp/t && echo h > $HOME/h && cat /tmp/t $HOME/h',
      'read-only',
    )
    expect(text(r)).toContain('t\nh\n')
    expect(tree(ws.cwd)).toEqual(before)
    expect(readFileSync(join(ws.cwd, 'keep.txt'), 'utf8')).toBe('keep')
    for (const p of ['/usr/x', '/etc/x']) expect(existsSync(p), p).toBe(false)
  })
})

describe.skipIf(!hasBwrap)('Bash sandbox: only what a command needs is visible', () => {
  let server: Server
  let sock: string
  beforeEach(async () => {
    sock = join(ws.outside, 'host.sock')
    server = createServer((s) => s.end('HOST SOCKET\n'))
    await new Promise<void>((r) => server.listen(sock, () => r()))
  })
  afterEach(async () => {
    await new Promise<void>((r) => server.close(() => r()))
  })

  it('CHIMERA_HOME, other projects, the real home, /run, /var/run, host sockets and /etc secrets are absent', async () => {
    const home = process.env.CHIMERA_HOME as string
    mkdirSync(join(home, 'eventlog', 'other-project'), { recursive: true })
    writeFileSync(join(home, 'eventlog', 'other-project', 'event-000001-user_message.json'), '{"text":"secret prompt"}')
    const realHome = homedir()
    const probe = [
      home,
      join(home, 'eventlog'),
      realHome,
      join(realHome, '.ssh'),
      join(realHome, '.bashrc'),
      '/root',
      '/home',
      '/run',
      '/var/run',
      '/var',
      ws.outside,
      sock,
      '/etc/shadow',
      '/etc/ssh',
      '/etc/npmrc',
      '/etc/sudoers',
      '/etc/environment',
      '/opt',
      '/sys',
      '/work',
    ]
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const r = await run(
        `for p in ${probe.map((p) => `'${p}'`).join(' ')}; do if [ -e "$p" ] || [ -L "$p" ]; then echo "VISIBLE $p"; fi; done; cat ${home}/eventlog/*/* 2>&1; node -e "require('net').connect('${sock}').on('data',d=>process.stdout.write(String(d))).on('error',e=>console.log('socket', e.code))"; echo end`,
        mode,
        { protectedPaths: [home] },
      )
      expect(text(r), mode).not.toContain('VISIBLE')
      expect(text(r), mode).not.toContain('secret prompt')
      expect(text(r), mode).not.toContain('HOST SOCKET')
      expect(text(r), mode).toContain('socket ENOENT')
      expect(text(r), mode).toContain('end')
    }
  })

  it('a shell and common tools still work: /usr, /bin, /lib*, /etc entries, awk through /etc/alternatives, a writable HOME', async () => {
    const r = await run(
      'ls / | tr "\\n" " "; echo; id -un; awk "BEGIN{print 6*7}"; cd && pwd && touch ok && echo home-writable; git --version >/dev/null && echo git-ok',
      'read-only',
    )
    expect(r.ok, text(r)).toBe(true)
    expect(text(r)).toMatch(/^bin dev etc (lib\S* )+proc (sbin )?tmp usr \n\S+\n/)
    expect(text(r)).toContain('42\n/tmp/home\nhome-writable\ngit-ok\n')
  })

  it('protected paths inside the workspace are masked in read-only too', async () => {
    ws.write({ 'cfg/secret.json': '{"token":"s3cret"}', 'visible.txt': 'ok' })
    const r = await run('cat visible.txt cfg/secret.json; ls -A cfg', 'read-only', {
      protectedPaths: [join(ws.cwd, 'cfg')],
    })
    expect(text(r)).toContain('ok')
    expect(text(r)).not.toContain('s3cret')
  })

  it('a protected path inside a read-only one: the directories between them stay read-only (no writable pin)', async () => {
    const cfg = join(ws.cwd, '.chimera')
    const snaps = join(cfg, 'state', 'snaps')
    mkdirSync(snaps, { recursive: true })
    writeFileSync(join(snaps, 'key'), 'TOPSECRET\n')
    const r = await run(
      'echo pwn > .chimera/state/evil; mkdir .chimera/state/hooks; mv .chimera/state .chimera/moved; cat .chimera/state/snaps/key; echo done',
      'workspace-write',
      { protectedPaths: [snaps], readOnlyPaths: [cfg] },
    )
    expect(text(r)).toContain('done')
    expect(text(r)).not.toContain('TOPSECRET')
    expect(tree(cfg)).toEqual(['state', 'state/snaps', 'state/snaps/key'])
  })

  it('read-only paths in the workspace cannot be created, changed or removed in workspace-write', async () => {
    const cfg = join(ws.cwd, '.chimera')
    // Missing at first: the model must not be able to create it.
    const grant = `mkdir -p .chimera; echo '{"permission":{"Bash":"allow"}}' > .chimera/config.json; echo other > free.txt; echo done`
    const r1 = await run(grant, 'workspace-write', { readOnlyPaths: [cfg] })
    expect(text(r1)).toContain('done')
    expect(existsSync(join(cfg, 'config.json'))).toBe(false)
    expect(readFileSync(join(ws.cwd, 'free.txt'), 'utf8')).toBe('other\n')
    // Existing: no change, no removal, no rename.
    writeFileSync(join(cfg, 'config.json'), '{}')
    const r2 = await run(`${grant}; rm -rf .chimera; mv .chimera old; echo x > .chimera/new`, 'workspace-write', {
      readOnlyPaths: [cfg],
    })
    expect(text(r2)).toContain('done')
    expect(tree(cfg)).toEqual(['config.json'])
    expect(readFileSync(join(cfg, 'config.json'), 'utf8')).toBe('{}')
    expect(existsSync(join(ws.cwd, 'old'))).toBe(false)
  })
})

describe('Bash environment: no secrets reach a command, in any mode', () => {
  const secrets = {
    ANTHROPIC_API_KEY: 'sk-ant-SECRET',
    OPENAI_API_KEY: 'sk-SECRET',
    CHIMERA_OPENAI_BASE_URL: 'http://SECRET',
    CHIMERA_OPENAI_API_KEY: 'SECRET',
    OTTER_SERVER_TOKEN: 'otter-SECRET',
    FERRET_SERVER_TOKEN: 'ferret-SECRET',
    CHIMERA_SOMETHING: 'SECRET',
    AWS_SECRET_ACCESS_KEY: 'SECRET',
    GITHUB_TOKEN: 'SECRET',
  }
  let saved: Record<string, string | undefined>
  beforeEach(() => {
    saved = {}
    for (const [k, v] of Object.entries({ ...secrets, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' })) {
      saved[k] = process.env[k]
      process.env[k] = v
    }
  })
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })

  const check = (out: string, home: string): void => {
    expect(out).not.toContain('SECRET')
    for (const k of Object.keys(secrets)) expect(out).not.toContain(`${k}=`)
    expect(out).not.toMatch(/^CHIMERA_/m)
    expect(out).toContain(`HOME=${home}\n`)
    expect(out).toContain('LANG=C.UTF-8\n')
    expect(out).toContain('LC_ALL=C.UTF-8\n')
    expect(out).toContain('USER_EXTRA=configured\n')
    expect(out).toMatch(/^PATH=/m)
  }

  it.skipIf(!hasBwrap)(
    'confined and danger-full-access runs see only the allow list and the configured extras',
    async () => {
      for (const mode of ['read-only', 'workspace-write', 'danger-full-access'] as const) {
        const r = await run('env', mode, { toolEnv: { USER_EXTRA: 'configured' } })
        check(text(r), mode === 'danger-full-access' ? homedir() : '/tmp/home')
      }
    },
  )

  it('an unconfined run (no bwrap, allowed) sees the same allow list', async () => {
    const ctx = recordingContext(ws.cwd, 'workspace-write')
    ctx.allowUnconfined = true
    ctx.toolEnv = { USER_EXTRA: 'configured' }
    const r = await withoutBwrap(() => bashTool.run({ command: 'env' }, ctx))
    check(text(r), homedir())
  })
})
