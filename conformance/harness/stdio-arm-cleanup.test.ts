/**
 * A stdio target runs in a process group of its own: when the arm is disposed, what the target
 * started (a launcher's native binary, a tool process) is stopped with it, even when the
 * target ignores the end of its input and outlives its grandchild's parent.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { running as alive } from './process-state.ts'
import { afterEach, describe, expect, it } from 'vitest'
import { StdioArm } from './arms/stdio.ts'
import { AcpSniffer } from './sniffer.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('stdio arm cleanup', () => {
  it('kills the grandchildren of a target that ignores the end of its input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chimera-arm-'))
    dirs.push(dir)
    const pidFile = join(dir, 'grandchild.pid')
    // A launcher-like target: starts a long-lived grandchild, records its pid, ignores SIGTERM and stdin's end.
    const script = `trap '' TERM; sleep 300 & echo $! > ${pidFile}; while :; do sleep 1; done`
    const arm = new StdioArm({ command: ['sh', '-c', script], cwd: dir }, [], new AcpSniffer())
    let grandchild = 0
    for (let i = 0; i < 100 && !grandchild; i++) {
      await new Promise((r) => setTimeout(r, 20))
      try {
        grandchild = Number(readFileSync(pidFile, 'utf8').trim())
      } catch {
        // not written yet
      }
    }
    expect(grandchild).toBeGreaterThan(0)
    expect(alive(grandchild)).toBe(true)
    await arm.dispose()
    for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(grandchild)).toBe(false)
  }, 15_000)
})
