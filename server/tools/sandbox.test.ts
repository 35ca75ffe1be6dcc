/**
 * The pure parts of the process sandbox: bwrap discovery (CHIMERA_BWRAP, default path, PATH)
 * and the bwrap argument list per mode.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bwrapArgs, findBwrap, missingBwrapNotice, sandboxedCommand } from './sandbox.ts'

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

describe('bwrapArgs', () => {
  it('workspace-write binds the cwd writable after the /tmp tmpfs, with no network', () => {
    expect(bwrapArgs('workspace-write', '/w')).toEqual([
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--tmpfs', '/tmp',
      '--bind', '/w', '/w',
      '--unshare-net',
      '--unshare-pid',
      '--die-with-parent',
      '--chdir', '/w',
    ])
  })

  it('read-only keeps the cwd read-only', () => {
    const args = bwrapArgs('read-only', '/w')
    expect(args).not.toContain('--bind')
    expect(args.join(' ')).toContain('--tmpfs /tmp --ro-bind /w /w --unshare-net')
  })

  it('danger-full-access is not sandboxed', () => {
    expect(bwrapArgs('danger-full-access', '/w')).toEqual([])
  })
})

describe('sandboxedCommand', () => {
  it('wraps bash -c in bwrap in the confined modes', () => {
    expect(sandboxedCommand('workspace-write', '/w', 'ls', { CHIMERA_BWRAP: fake })).toEqual({
      file: fake,
      args: [...bwrapArgs('workspace-write', '/w'), '--', 'bash', '-c', 'ls'],
      sandboxed: true,
      missingBwrap: false,
    })
  })
  it('runs plain bash in danger-full-access, and unconfined (flagged) without bwrap', () => {
    expect(sandboxedCommand('danger-full-access', '/w', 'ls', { CHIMERA_BWRAP: fake })).toEqual({ file: 'bash', args: ['-c', 'ls'], sandboxed: false, missingBwrap: false })
    expect(sandboxedCommand('read-only', '/w', 'ls', { CHIMERA_BWRAP: '/nonexistent' })).toEqual({ file: 'bash', args: ['-c', 'ls'], sandboxed: false, missingBwrap: true })
    expect(missingBwrapNotice('read-only')).toBe('bubblewrap (bwrap) is not installed: Bash runs without the read-only sandbox')
  })
})
