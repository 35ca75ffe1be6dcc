/**
 * The curl walkthrough of docs/http-walkthrough.md (docs/http.md "Worked example"), run by bash
 * with curl and jq themselves against the built CLI: the doc's block verbatim but for the port
 * (a free one) and `chimera` on PATH. The stream must end with `end`, the summary must be the
 * finished run's, and the background server is stopped afterwards (`serve stop`).
 */
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'

const temp = tempDirs()
afterAll(() => temp.cleanup())
const tools = ['bash', 'curl', 'jq'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0)

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as { port: number }).port
  await new Promise((r) => s.close(r))
  return port
}

describe('the curl walkthrough', () => {
  it.skipIf(!tools)(
    'runs as documented: create, stream until end, summary',
    async () => {
      const doc = readFileSync(new URL('../../docs/http-walkthrough.md', import.meta.url), 'utf8')
      const block = /```bash\n([\s\S]*?)```/.exec(doc)![1]!
      const port = await freePort()
      const home = temp.make('curl-home-')
      const bin = join(home, 'bin')
      mkdirSync(bin)
      writeFileSync(
        join(bin, 'chimera'),
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BUNDLE)} "$@"\n`,
      )
      chmodSync(join(bin, 'chimera'), 0o755)
      const script = `set -e\n${block.replaceAll('5173', String(port))}\nchimera otter serve stop --port ${port} >&2\nwait\n`
      const child = spawn('bash', ['-c', script], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, CHIMERA_HOME: home },
        cwd: home,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let out = ''
      let err = ''
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d))
      const timer = setTimeout(() => child.kill('SIGKILL'), 25_000)
      const code = await new Promise<number | null>((r) => child.on('close', r))
      clearTimeout(timer)
      expect(code, err).toBe(0)
      // Step 3: the SSE stream, from the first record to `end`.
      expect(out).toMatch(/^retry: 1000\n/)
      expect(out).toMatch(/id: 1\nevent: user_message\ndata: .*"text":"list files and read README"/)
      expect(out).toMatch(/event: agent_result\n/)
      expect(out).toMatch(/event: end\ndata: \{"session_id":"[^"]+","success":true\}\n/)
      // Step 4: jq prints the summary object.
      const summary = JSON.parse(out.slice(out.lastIndexOf('\n{\n') + 1)) as Record<string, unknown>
      expect(summary).toMatchObject({
        prompt: 'list files and read README',
        success: true,
        model: 'offline',
        event_count: expect.any(Number),
      })
      expect(err).toMatch(new RegExp(`otter port=${port} pid=\\d+ stopped \\(SIGTERM\\)`))
    },
    30_000,
  )
})
