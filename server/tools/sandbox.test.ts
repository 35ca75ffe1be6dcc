/**
 * The pure parts of the process sandbox: bwrap discovery (CHIMERA_BWRAP, default path, PATH),
 * the system part of the root read from a fake host, the bwrap argument list per mode, the
 * masks and read-only binds for protected and read-only paths, failing closed without bwrap,
 * and the start-up status line.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  bwrapArgs,
  findBwrap,
  missingBwrapError,
  planPaths,
  sandboxedCommand,
  sandboxHome,
  sandboxStatus,
  systemMounts,
  unconfinedNotice,
  type SandboxPlan,
} from './sandbox.ts'

let dir: string
let fake: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'chimera-bwrap-'))
  fake = join(dir, 'bwrap')
  writeFileSync(fake, '#!/bin/sh\n')
  chmodSync(fake, 0o755)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

describe('findBwrap', () => {
  it('uses CHIMERA_BWRAP when it is executable, and counts a bad one as missing', () => {
    expect(findBwrap({ CHIMERA_BWRAP: fake })).toBe(fake)
    expect(findBwrap({ CHIMERA_BWRAP: '/nonexistent' })).toBeUndefined()
    const plain = join(dir, 'plain')
    writeFileSync(plain, '')
    chmodSync(plain, 0o644)
    expect(findBwrap({ CHIMERA_BWRAP: plain })).toBeUndefined()
    expect(findBwrap({ CHIMERA_BWRAP: dir })).toBeUndefined()
  })

  it('falls back to the default path, then PATH', () => {
    expect(findBwrap({}, fake)).toBe(fake)
    expect(findBwrap({ PATH: `/nonexistent-dir:${dir}` }, '/nonexistent/bwrap')).toBe(fake)
    expect(findBwrap({ PATH: '/nonexistent-dir' }, '/nonexistent/bwrap')).toBeUndefined()
    expect(findBwrap({ CHIMERA_BWRAP: '', PATH: dir }, '/nonexistent/bwrap')).toBe(fake)
  })
})

describe('systemMounts', () => {
  it('binds the system directories and the listed /etc entries only; links stay links when they stay in /usr', () => {
    const root = join(dir, 'host')
    for (const d of [
      'usr/bin',
      'usr/lib',
      'lib32',
      'etc/ssl',
      'etc/ssh',
      'run/systemd',
      'home/u/.ssh',
      'var/run',
      'opt',
    ])
      mkdirSync(join(root, d), { recursive: true })
    symlinkSync('usr/bin', join(root, 'bin'))
    symlinkSync('usr/lib', join(root, 'lib'))
    for (const f of [
      'etc/passwd',
      'etc/shadow',
      'etc/npmrc',
      'etc/hosts',
      'run/systemd/resolv.conf',
      'usr/lib/os-release',
    ])
      writeFileSync(join(root, f), 'x')
    symlinkSync(join(root, 'run/systemd/resolv.conf'), join(root, 'etc/resolv.conf'))
    symlinkSync('../usr/lib/os-release', join(root, 'etc/os-release'))
    expect(systemMounts(root)).toEqual([
      { kind: 'ro-bind', src: join(root, 'usr'), dest: '/usr' },
      { kind: 'symlink', target: 'usr/bin', dest: '/bin' },
      { kind: 'symlink', target: 'usr/lib', dest: '/lib' },
      { kind: 'ro-bind', src: join(root, 'lib32'), dest: '/lib32' },
      { kind: 'ro-bind', src: join(root, 'etc/passwd'), dest: '/etc/passwd' },
      { kind: 'ro-bind', src: join(root, 'etc/hosts'), dest: '/etc/hosts' },
      // The link led to /run: only the file it names is bound, never /run.
      { kind: 'ro-bind', src: join(root, 'run/systemd/resolv.conf'), dest: '/etc/resolv.conf' },
      { kind: 'ro-bind', src: join(root, 'etc/ssl'), dest: '/etc/ssl' },
      { kind: 'symlink', target: '../usr/lib/os-release', dest: '/etc/os-release' },
    ])
  })
})

const plan = (over: Partial<SandboxPlan>): SandboxPlan => ({
  mode: 'workspace-write',
  cwd: '/w',
  system: [
    { kind: 'ro-bind', src: '/usr', dest: '/usr' },
    { kind: 'symlink', target: 'usr/bin', dest: '/bin' },
  ],
  features: { userns: true },
  masks: [],
  readOnly: [],
  ...over,
})

describe('bwrapArgs', () => {
  it('workspace-write: every namespace, no capabilities, system dirs, private /dev /proc /tmp and home, the cwd writable, root read-only', () => {
    expect(bwrapArgs(plan({}))).toEqual([
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--cap-drop',
      'ALL',
      '--new-session',
      '--die-with-parent',
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/bin',
      '/bin',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/tmp/home',
      '--bind',
      '/w',
      '/w',
      '--remount-ro',
      '/',
      '--chdir',
      '/w',
    ])
  })

  it('read-only keeps the cwd read-only; without user namespaces the capabilities are still dropped', () => {
    const args = bwrapArgs(plan({ mode: 'read-only', features: { userns: false } }))
    expect(args).not.toContain('--bind')
    expect(args).not.toContain('--unshare-user')
    expect(args.join(' ')).toContain('--ro-bind /w /w')
    expect(args.join(' ')).toContain('--cap-drop ALL')
  })

  it('masks protected paths with an empty read-only tmpfs (or /dev/null for files) and binds read-only paths, parents first', () => {
    const args = bwrapArgs(
      plan({
        masks: [
          { path: '/w/.chimera/home', kind: 'directory' },
          { path: '/w/secret.json', kind: 'other' },
        ],
        readOnly: [{ path: '/w/.chimera', kind: 'directory' }],
      }),
    ).join(' ')
    expect(args).toContain(
      '--bind /w /w --ro-bind /w/.chimera /w/.chimera --ro-bind /dev/null /w/secret.json --tmpfs /w/.chimera/home --remount-ro /w/.chimera/home --remount-ro /',
    )
  })

  it('danger-full-access binds the host root as it is, in a PID namespace that dies with the server', () => {
    expect(bwrapArgs(plan({ mode: 'danger-full-access' }))).toEqual([
      '--bind',
      '/',
      '/',
      '--dev-bind',
      '/dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-pid',
      '--new-session',
      '--die-with-parent',
      '--chdir',
      '/w',
    ])
  })

  it('picks a home that does not overlap the workspace', () => {
    expect(sandboxHome('/tmp/x/ws')).toBe('/tmp/home')
    expect(sandboxHome('/tmp/home/proj')).toBe('/home/sandbox')
    expect(sandboxHome('/tmp')).toBe('/home/sandbox')
  })
})

describe('planPaths', () => {
  it('masks protected paths inside bound trees, creating a missing one in a writable workspace; skips the rest', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'existing'), { recursive: true })
    writeFileSync(join(ws, 'file.json'), '{}')
    const r = await planPaths(
      'workspace-write',
      ws,
      {
        protectedPaths: [join(ws, 'existing'), join(ws, 'file.json'), join(ws, 'missing'), '/elsewhere/home'],
        readOnlyPaths: [],
      },
      [],
    )
    expect(r).toEqual({
      ok: true,
      readOnly: [],
      masks: [
        { path: join(ws, 'existing'), kind: 'directory' },
        { path: join(ws, 'file.json'), kind: 'other' },
        { path: join(ws, 'missing'), kind: 'directory' },
      ],
    })
    expect(statSync(join(ws, 'missing')).mode & 0o777).toBe(0o700)
    const ro = await planPaths(
      'read-only',
      ws,
      { protectedPaths: [join(ws, 'not-there')], readOnlyPaths: [join(ws, 'cfg')] },
      [],
    )
    expect(ro).toEqual({ ok: true, masks: [], readOnly: [] })
    expect(existsSync(join(ws, 'not-there'))).toBe(false)
  })

  it('masks a protected path inside another only once, by the outer mask (CHIMERA_HOME and its snapshots)', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, '.chimera', 'snapshots'), { recursive: true })
    const home = join(ws, '.chimera')
    const r = await planPaths(
      'workspace-write',
      ws,
      { protectedPaths: [home, join(home, 'snapshots'), home], readOnlyPaths: [] },
      [],
    )
    expect(r).toEqual({ ok: true, readOnly: [], masks: [{ path: home, kind: 'directory' }] })
  })

  it('binds read-only paths inside a writable workspace, creating a missing one so it cannot be created later', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(ws)
    const r = await planPaths(
      'workspace-write',
      ws,
      { protectedPaths: [], readOnlyPaths: [join(ws, '.chimera'), '/outside/.chimera'] },
      [],
    )
    expect(r).toEqual({ ok: true, masks: [], readOnly: [{ path: join(ws, '.chimera'), kind: 'directory' }] })
    expect(statSync(join(ws, '.chimera')).isDirectory()).toBe(true)
  })

  it('refuses a workspace inside a protected path, and symlinked special paths', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'real'), { recursive: true })
    symlinkSync(join(ws, 'real'), join(ws, '.chimera'))
    expect(await planPaths('workspace-write', ws, { protectedPaths: [dir], readOnlyPaths: [] }, [])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('inside the protected path'),
    })
    expect(
      await planPaths('workspace-write', ws, { protectedPaths: [], readOnlyPaths: [join(ws, '.chimera')] }, []),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('symbolic link') })
  })
})

describe('planPaths: a rule path reached through a link inside the workspace', () => {
  // A command could re-point `link`: the mount made through it would keep hiding the old target
  // while the file tools protect the new one, leaving the old target readable by its own name.
  it('refuses a protected or read-only path whose parent inside the workspace is a symbolic link', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'real', 'snap'), { recursive: true })
    mkdirSync(join(ws, 'real', 'deep', 'cfg'), { recursive: true })
    symlinkSync(join(ws, 'real'), join(ws, 'link'))
    expect(
      await planPaths('workspace-write', ws, { protectedPaths: [join(ws, 'link', 'snap')], readOnlyPaths: [] }, []),
    ).toEqual({
      ok: false,
      reason: `the protected path ${join(ws, 'link', 'snap')} goes through the symbolic link ${join(ws, 'link')}, which a command could re-point; give the path without the link (for CHIMERA_HOME or CHIMERA_SNAPSHOT_ROOT, its real path, then restart)`,
    })
    // Also deeper and missing (nothing is created through the link), also named with a trailing slash.
    expect(
      await planPaths(
        'workspace-write',
        ws,
        { protectedPaths: [join(ws, 'link', 'deep', 'new')], readOnlyPaths: [] },
        [],
      ),
    ).toMatchObject({ ok: false, reason: expect.stringContaining(`symbolic link ${join(ws, 'link')},`) })
    expect(existsSync(join(ws, 'real', 'deep', 'new'))).toBe(false)
    expect(
      await planPaths('workspace-write', ws, { protectedPaths: [`${join(ws, 'link')}/`], readOnlyPaths: [] }, []),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('is a symbolic link') })
    // A read-only workspace too: bwrap cannot mount through an absolute link.
    expect(
      await planPaths('read-only', ws, { protectedPaths: [join(ws, 'link', 'snap')], readOnlyPaths: [] }, []),
    ).toMatchObject({ ok: false, reason: expect.stringContaining(`symbolic link ${join(ws, 'link')},`) })
    expect(
      await planPaths(
        'workspace-write',
        ws,
        { protectedPaths: [], readOnlyPaths: [join(ws, 'link', 'deep', 'cfg')] },
        [],
      ),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('the read-only path') })
  })

  it('masks the same paths named without the link, and a path below a plain directory', async () => {
    const ws = join(dir, 'ws')
    mkdirSync(join(ws, 'real', 'snap'), { recursive: true })
    symlinkSync(join(ws, 'real'), join(ws, 'link'))
    expect(
      await planPaths(
        'workspace-write',
        ws,
        { protectedPaths: [join(ws, 'real', 'snap'), join(ws, 'real', 'missing', 'x')], readOnlyPaths: [] },
        [],
      ),
    ).toEqual({
      ok: true,
      readOnly: [],
      masks: [
        { path: join(ws, 'real', 'snap'), kind: 'directory' },
        { path: join(ws, 'real', 'missing', 'x'), kind: 'directory' },
      ],
    })
  })
})

describe('sandboxedCommand without bubblewrap (fails closed)', () => {
  const opts = { protectedPaths: [], readOnlyPaths: [], realHome: '/root', env: { CHIMERA_BWRAP: '/nonexistent' } }
  it('refuses the confined modes with an error naming the package', async () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      expect(await sandboxedCommand(mode, '/w', 'ls', { ...opts, allowUnconfined: false })).toEqual({
        ok: false,
        error: missingBwrapError(mode),
      })
    }
    expect(missingBwrapError('read-only')).toMatch(/"bubblewrap" package.*--allow-unconfined/)
  })

  it('runs plain bash, flagged unconfined, when the user allowed it; danger-full-access runs plain bash unflagged', async () => {
    expect(await sandboxedCommand('read-only', '/w', 'ls', { ...opts, allowUnconfined: true })).toEqual({
      ok: true,
      file: 'bash',
      args: ['-c', 'ls'],
      sandboxed: false,
      unconfined: true,
      home: '/root',
    })
    expect(await sandboxedCommand('danger-full-access', '/w', 'ls', { ...opts, allowUnconfined: false })).toEqual({
      ok: true,
      file: 'bash',
      args: ['-c', 'ls'],
      sandboxed: false,
      unconfined: false,
      home: '/root',
    })
    expect(unconfinedNotice('workspace-write')).toMatch(/UNCONFINED.*workspace-write/)
  })
})

describe('sandboxStatus (the start-up line)', () => {
  it('says whether Bash is confined, refused, or unconfined on request', () => {
    expect(sandboxStatus('workspace-write', false, { CHIMERA_BWRAP: fake })).toMatchObject({
      level: 'info',
      confined: true,
      bwrap: fake,
      text: expect.stringContaining('Bash runs in bubblewrap'),
    })
    expect(sandboxStatus('read-only', false, { CHIMERA_BWRAP: '/nonexistent' })).toMatchObject({
      level: 'warning',
      confined: false,
      text: expect.stringMatching(/Bash is refused.*bubblewrap/),
    })
    expect(sandboxStatus('read-only', true, { CHIMERA_BWRAP: '/nonexistent' })).toMatchObject({
      level: 'warning',
      confined: false,
      text: expect.stringContaining('UNCONFINED'),
    })
    expect(sandboxStatus('danger-full-access', false, { CHIMERA_BWRAP: fake })).toMatchObject({
      confined: false,
      text: expect.stringContaining('PID namespace'),
    })
    expect(sandboxStatus('danger-full-access', false, { CHIMERA_BWRAP: '/nonexistent' }).text).toContain('can outlive')
  })
})
