/**
 * MCP servers that misbehave in ways a session must survive: one that announces a tool-list
 * change at every listing (the call still returns, a cancel is honoured, the re-listing is
 * bounded, not a busy loop), and one started through a wrapper (`sh -c`, as npx/uvx launch
 * servers) whose real process ignores the end of its input: close ends it too.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { running as alive } from '../../conformance/harness/process-state.ts'
import { afterEach, describe, expect, it } from 'vitest'
import { noopLogger } from '../log.ts'
import { SessionMcp } from './session-servers.ts'

const dirs: string[] = []
const temp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'chimera-mcp-hostile-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const nodePath = { name: 'NODE_PATH', value: join(process.cwd(), 'node_modules') }

describe('hostile MCP servers', () => {
  it('a server announcing a change at every listing: the call returns, re-listing is bounded, a cancel is honoured', async () => {
    const lists = join(temp(), 'lists')
    const fixture = join(import.meta.dirname, 'fixtures/relist-server.mjs')
    const mcp = await SessionMcp.connect(
      [
        {
          name: 'relist',
          command: process.execPath,
          args: [fixture],
          env: [nodePath, { name: 'LISTS_FILE', value: lists }],
        },
      ],
      { cwd: process.cwd(), logger: noopLogger, version: '0', timeoutMs: 5000 },
    )
    try {
      const tool = mcp.tools.get('mcp__relist__ping')!
      const first = await tool.run({}, { signal: new AbortController().signal, progress: () => {} } as never)
      expect(first).toMatchObject({ ok: true })
      // Re-listing goes on at a bounded pace (a few per second), not as fast as the server answers.
      const before = readFileSync(lists, 'utf8').length
      await new Promise((r) => setTimeout(r, 1500))
      expect(readFileSync(lists, 'utf8').length - before).toBeLessThan(15)
      // A cancelled call returns at once even while a listing is pending.
      const ac = new AbortController()
      const call = tool.run({}, { signal: ac.signal, progress: () => {} } as never)
      ac.abort()
      const r = await Promise.race([call, new Promise((res) => setTimeout(() => res('no answer'), 3000))])
      expect(r).not.toBe('no answer')
    } finally {
      await mcp.close()
    }
  }, 20_000)

  it('a server behind a wrapper that ignores the end of its input is ended with its wrapper', async () => {
    const pidfile = join(temp(), 'pids')
    const fixture = join(process.cwd(), 'conformance/harness/fixtures/mcp-server.mjs')
    const mcp = await SessionMcp.connect(
      [
        {
          name: 'wrapped',
          command: 'sh',
          args: ['-c', `"${process.execPath}" "${fixture}" --mode=ok; echo done >&2`],
          env: [{ name: 'FIXTURE_PIDFILE', value: pidfile }, { name: 'FIXTURE_STUBBORN', value: '1' }, nodePath],
        },
      ],
      { cwd: process.cwd(), logger: noopLogger, version: '0', timeoutMs: 10_000 },
    )
    expect(mcp.status.map((s) => s.status)).toEqual(['connected'])
    const pid = Number(readFileSync(pidfile, 'utf8').trim())
    expect(alive(pid)).toBe(true)
    await mcp.close()
    for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)
  }, 20_000)
})
