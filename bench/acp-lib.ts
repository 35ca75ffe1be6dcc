/** Shared by the ACP benches: spawn the bundled CLI and talk raw ACP frames to it. */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const CLI = fileURLToPath(new URL('../dist/chimera.mjs', import.meta.url))
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
export const since = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6

export interface Peer {
  child: ChildProcessByStdio<Writable, Readable, null>
  call(method: string, params: unknown): Promise<Record<string, any>>
  close(): Promise<void>
}

export function spawnAgent(args: string[], cli = CLI): Peer {
  const home = mkdtempSync(join(tmpdir(), 'chimera-bench-'))
  return peerOf(
    spawn(process.execPath, [cli, ...args], {
      env: { ...process.env, CHIMERA_HOME: home },
      stdio: ['pipe', 'pipe', 'ignore'],
    }),
  )
}

/** JSON-RPC over a child's stdin/stdout (one message a line). */
export function peerOf(child: ChildProcessByStdio<Writable, Readable, null>): Peer {
  const waiting = new Map<unknown, (m: Record<string, any>) => void>()
  let buf = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, i))
      buf = buf.slice(i + 1)
      if ('id' in m && !('method' in m)) waiting.get(m.id)?.(m)
    }
  })
  let id = 0
  return {
    child,
    call(method, params) {
      const n = id++
      return new Promise((resolve) => {
        waiting.set(n, resolve)
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`)
      })
    },
    close() {
      child.stdin.end()
      return new Promise((r) => child.once('exit', () => r()))
    },
  }
}
