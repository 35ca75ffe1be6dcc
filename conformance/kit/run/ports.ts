/**
 * Loopback ports for the targets the kit starts (an HTTP server per scenario, the model double):
 * any free port, or with `--ports FROM-TO` a free one in that range (for a CI that opens only
 * some ports), tried from a random point of the range so parallel runs rarely collide.
 */
import { createServer } from 'node:net'
import { UsageError } from '../../../server/cli/args.ts'

export interface PortRange {
  from: number
  to: number
}

export function parsePortRange(text: string): PortRange {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim())
  const from = Number(m?.[1])
  const to = Number(m?.[2])
  if (!m || from < 1 || to > 65535 || from > to)
    throw new UsageError(`--ports must be FROM-TO within 1-65535, got ${JSON.stringify(text)}`)
  return { from, to }
}

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((res) => {
    const s = createServer()
    s.once('error', () => res(undefined))
    s.listen(port, '127.0.0.1', () => {
      const got = (s.address() as { port: number }).port
      s.close(() => res(got))
    })
  })
}

/** A free loopback port (in `range` when given; throws when none of it is free). */
export async function freePort(range?: PortRange): Promise<number> {
  if (!range) {
    const p = await tryListen(0)
    if (p === undefined) throw new Error('no free loopback port')
    return p
  }
  const size = range.to - range.from + 1
  const start = Math.floor(Math.random() * size)
  for (let i = 0; i < size; i++) {
    const p = await tryListen(range.from + ((start + i) % size))
    if (p !== undefined) return p
  }
  throw new Error(`no free loopback port in ${range.from}-${range.to}`)
}
