/** The tests' process clean-up (fixtures/process-end.ts): a child that ignores SIGTERM is still ended. */
import { spawn, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { ended } from './fixtures/process-end.ts'

const started: ChildProcess[] = []
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
})

/** A node child that prints `ready` once its SIGTERM handler (if any) is in place. */
async function child(code: string): Promise<ChildProcess> {
  const c = spawn(process.execPath, ['-e', `${code}; setInterval(() => {}, 1000); console.log('ready')`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  started.push(c)
  await new Promise<void>((resolve) => c.stdout!.once('data', () => resolve()))
  return c
}

describe('ended', () => {
  it('sends the signal and waits for the exit', async () => {
    const c = await child('')
    await ended(c, 'SIGTERM', 5_000)
    expect(c.signalCode).toBe('SIGTERM')
  })

  it('kills a child that is still there after the grace time', async () => {
    const c = await child("process.on('SIGTERM', () => {})")
    await ended(c, 'SIGTERM', 200)
    expect(c.signalCode).toBe('SIGKILL')
  })
})
