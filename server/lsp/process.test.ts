/**
 * No language server outlives the agent process that started it (`chimera code --mode rpc`, the
 * bundle): after the end of stdin (clean shutdown: the servers are asked to exit, then killed
 * with their process group), and after the agent is killed outright with SIGKILL (the servers
 * notice on their own: the closed pipe and the parent pid given in `initialize`).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { COLD_MS, processesIn } from './fixtures/project.ts'

const temp = tempDirs()
const children: ChildProcessWithoutNullStreams[] = []
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  temp.cleanup()
})

/** A TypeScript workspace, and `code --mode rpc` in it after one lsp_definition call answered. */
async function agentWithServer(): Promise<{
  child: ChildProcessWithoutNullStreams
  ws: string
  exited: Promise<number | null>
}> {
  const ws = realpathSync(temp.make('lsp-proc-ws-'))
  mkdirSync(join(ws, 'src'))
  writeFileSync(join(ws, 'tsconfig.json'), '{"include":["src"]}')
  writeFileSync(join(ws, 'src/a.ts'), 'export const alpha = 1\n')
  writeFileSync(join(ws, 'src/b.ts'), "import { alpha } from './a'\nexport const beta = alpha\n")
  const child = spawn(process.execPath, [CLI_BUNDLE, 'code', '--mode', 'rpc', '--cwd', ws], {
    env: { ...process.env, CHIMERA_HOME: temp.make('lsp-proc-home-') },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d))
  child.stderr.resume()
  child.stdin.write(
    `${JSON.stringify({ type: 'prompt', id: 'p1', message: '!call lsp_definition {"path":"src/b.ts","position":{"text":"alpha","occurrence":2}}' })}\n`,
  )
  const deadline = Date.now() + COLD_MS - 10_000
  while (!out.includes('"command":"prompt"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  expect(out).toContain('src/a.ts:0:13')
  expect(processesIn(ws).length).toBeGreaterThan(0)
  return { child, ws, exited }
}

async function gone(ws: string, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms
  while (processesIn(ws).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  return processesIn(ws)
}

describe('language servers end with the agent process', () => {
  it(
    'the end of stdin: exit 0 and no server left',
    async () => {
      const { child, ws, exited } = await agentWithServer()
      child.stdin.end()
      expect(await exited).toBe(0)
      expect(processesIn(ws)).toEqual([])
    },
    COLD_MS,
  )

  it(
    'SIGKILL of the agent: the servers exit by themselves',
    async () => {
      const { child, ws, exited } = await agentWithServer()
      child.kill('SIGKILL')
      await exited
      expect(await gone(ws, 10_000)).toEqual([])
    },
    COLD_MS,
  )
})
