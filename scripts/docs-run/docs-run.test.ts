/**
 * Docs that run: every shell block of README.md and docs/*.md (scripts/docs-run/blocks.ts) is
 * executed as a user would type it — with `chimera` on PATH (a launcher for this checkout's
 * bin/chimera.mjs), in a temporary workspace, with a temporary HOME and CHIMERA_HOME, a free port
 * for the page's 5173, a time limit each, its process group ended afterwards — and a `console`
 * block's output is compared with what the page shows. Blocks marked `docs-test: skip` are
 * counted with their reason; an unmarked block that fails fails the test.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { allBlocks, docFiles, matchesShown, splitConsole, type Block } from './blocks.ts'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const LIMIT_MS = 30_000
const temp = tempDirs()
const blocks = allBlocks(ROOT)
const tally = { run: 0, skipped: new Map<string, string[]>() }

afterAll(() => {
  const lines = [...tally.skipped].map(([reason, where]) => `  ${where.length} × ${reason}: ${where.join(', ')}`)
  process.stdout.write(
    `docs blocks: ${tally.run} run, ${blocks.length - tally.run} marked not runnable\n${lines.join('\n')}\n`,
  )
  temp.cleanup()
})

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => res(port))
    })
    s.on('error', rej)
  })
}

/** A user's machine after the README's set-up: `chimera` on PATH, an empty project, a fresh home. */
function machine(): { env: NodeJS.ProcessEnv; cwd: string } {
  const root = temp.make('chimera-docs-run-')
  const bin = join(root, 'bin')
  const cwd = join(root, 'project')
  for (const d of [bin, cwd, join(root, 'home'), join(root, 'chimera-home')]) mkdirSync(d)
  for (const name of ['chimera', 'chimera-conformance']) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', `${name}.mjs`)}" "$@"\n`)
    chmodSync(join(bin, name), 0o755)
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${bin}:${process.env.PATH}`,
    HOME: join(root, 'home'),
    CHIMERA_HOME: join(root, 'chimera-home'),
  }
  delete env.OTTER_SERVER_TOKEN
  delete env.FERRET_SERVER_TOKEN
  return { env, cwd }
}

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a script with bash in a process group of its own; the whole group ends when it does (or at the limit). */
function run(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  const child = spawn('bash', ['-e', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const end = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // the group is gone
    }
  }
  const timer = setTimeout(() => {
    stderr += `\n[docs-run] time limit of ${LIMIT_MS} ms reached`
    end()
  }, LIMIT_MS)
  return new Promise((res) => {
    child.on('exit', (code) => {
      clearTimeout(timer)
      // What the block left running in the background (a server it started) ends with it.
      end()
      // Output still buffered in the pipes arrives before 'close'.
      child.on('close', () => res({ code, stdout, stderr }))
    })
  })
}

/** `chimera otter serve --port 0` in the workspace; resolves with its URL. */
function startServer(cwd: string, env: NodeJS.ProcessEnv): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'chimera.mjs'), 'otter', 'serve', '--port', '0'], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`the server did not start:\n${err}`)), 20_000)
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d
      const m = /listening on (http:\/\/\S+)/.exec(err)
      if (m) {
        clearTimeout(timer)
        res({ url: m[1]!, child })
      }
    })
    child.on('exit', (code) => rej(new Error(`the server exited with ${code}:\n${err}`)))
  })
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await exited
}

const label = (b: Block): string => `${b.file}:${b.line} (${b.lang})`

describe('the shell blocks of README.md and docs/*.md', () => {
  it('finds the blocks', () => {
    expect(blocks.length).toBeGreaterThan(0)
  })

  it('names only decision records that exist', () => {
    const missing = docFiles(ROOT).flatMap((f) =>
      [...readFileSync(join(ROOT, f), 'utf8').matchAll(/docs\/decisions\/\d{4}-[\w.-]+?\.md/g)]
        .map((m) => m[0])
        .filter((d) => !existsSync(join(ROOT, d)))
        .map((d) => `${f}: ${d}`),
    )
    expect(missing).toEqual([])
  })

  for (const block of blocks) {
    if (block.skip) {
      it.skip(`${label(block)}: not runnable here — ${block.skip}`, () => {})
      const where = tally.skipped.get(block.skip) ?? []
      where.push(`${block.file}:${block.line}`)
      tally.skipped.set(block.skip, where)
      continue
    }
    it(
      `${label(block)} runs${block.lang === 'console' ? ' and prints what the page shows' : ''}`,
      async () => {
        tally.run++
        const { env, cwd } = machine()
        const { script, expected } =
          block.lang === 'console' ? splitConsole(block.text) : { script: block.text, expected: [] }
        let server: ChildProcess | undefined
        let text = script
        try {
          if (block.server) {
            const started = await startServer(cwd, env)
            server = started.child
            text = text.replaceAll('http://127.0.0.1:5173', started.url)
          } else {
            text = text.replace(/\b5173\b/g, String(await freePort()))
          }
          const r = await run(text, cwd, env)
          const report = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-4000)}`
          expect(r.code, report).toBe(0)
          if (expected.length)
            expect(
              matchesShown(expected, r.stdout),
              `${label(block)} printed something else than the page shows:\n${report}`,
            ).toBe(true)
        } finally {
          if (server) await stop(server)
        }
      },
      LIMIT_MS + 30_000,
    )
  }
})
