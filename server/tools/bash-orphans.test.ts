/**
 * No process a Bash command starts outlives its call, in every mode: a `setsid` background job
 * (which leaves the process group) is gone when the command ends and when the call is
 * cancelled, because even `danger-full-access` runs in a PID namespace that dies with bwrap; and
 * killSupervised('tool') (for shutdown) ends every running command. Processes are found by a
 * marker in their command line, since pids inside a namespace mean nothing outside.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bashTool } from './bash.ts'
import { killSupervised, supervised } from '../platform/supervisor.ts'
import { findBwrap } from './sandbox.ts'
import {
  processesMatching,
  recordingContext,
  tempWorkspace,
  waitGone,
  waitStarted,
  type TempWorkspace,
} from './fixtures/workspace.ts'

const hasBwrap = findBwrap() !== undefined
const MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

let ws: TempWorkspace
let id: string
let marker: string
beforeEach(() => {
  ws = tempWorkspace()
  id = randomUUID()
  marker = `chimera-orphan-${id}`
})
afterEach(async () => {
  // Never leave a stray process behind, whatever the test did.
  for (const pid of processesMatching(marker)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  ws.cleanup()
})

/**
 * A detached `sleep` named `marker`, in its own session (outside the command's process group).
 * The quotes keep the marker itself out of the command line of bwrap and bash.
 */
const orphan = (): string => `setsid bash -c 'exec -a chimera-orphan-"${id}" sleep 312' </dev/null >/dev/null 2>&1 &`

describe.skipIf(!hasBwrap)('Bash: no process outlives its call', () => {
  for (const mode of MODES) {
    it(`${mode}: a setsid background job dies when the command ends`, async () => {
      const r = await bashTool.run({ command: `${orphan()} sleep 0.3; echo started` }, recordingContext(ws.cwd, mode))
      expect(r).toMatchObject({ ok: true, output: 'started\n', data: { sandboxed: true } })
      expect(await waitGone(marker)).toEqual([])
    })

    it(`${mode}: a setsid background job dies when the call is cancelled`, async () => {
      const ctx = recordingContext(ws.cwd, mode)
      const done = bashTool.run({ command: `${orphan()} sleep 300` }, ctx)
      expect(await waitStarted(marker)).toBe(true)
      ctx.controller.abort()
      expect(await done).toMatchObject({ ok: false, data: { cancelled: true } })
      expect(await waitGone(marker)).toEqual([])
    })
  }

  it('a cancel while bwrap is still setting up leaves nothing either', async () => {
    for (const mode of MODES) {
      for (let i = 0; i < 3; i++) {
        const ctx = recordingContext(ws.cwd, mode)
        // The marker is in bwrap's and bash's own command lines here: all of them must go.
        const done = bashTool.run({ command: `sleep 300; : ${marker}` }, ctx)
        const until = Date.now() + 10_000
        while (supervised('tool').length === 0 && Date.now() < until) await new Promise((r) => setImmediate(r))
        ctx.controller.abort()
        expect(await done).toMatchObject({ ok: false, data: { cancelled: true } })
        expect(await waitGone(marker), mode).toEqual([])
      }
    }
  })

  it('killSupervised("tool") ends every running command and its namespace (for shutdown)', async () => {
    const runs = MODES.map((mode) => bashTool.run({ command: `${orphan()} sleep 300` }, recordingContext(ws.cwd, mode)))
    const until = Date.now() + 10_000
    while (processesMatching(marker).length < MODES.length && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20))
    expect(processesMatching(marker)).toHaveLength(MODES.length)
    expect(supervised('tool').length).toBeGreaterThanOrEqual(MODES.length)
    expect(killSupervised('tool')).toBeGreaterThanOrEqual(MODES.length)
    for (const r of await Promise.all(runs)) expect(r).toMatchObject({ ok: false, data: { signal: 'SIGKILL' } })
    expect(await waitGone(marker)).toEqual([])
    expect(supervised('tool')).toEqual([])
  })
})
