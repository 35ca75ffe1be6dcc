/**
 * The agent process as users run it: SIGTERM, SIGINT and SIGHUP end every surface gracefully
 * (the running turn is cancelled and logged as cancelled, its tool process killed, exit 0);
 * `ferret serve --http` serves ACP on stdio and HTTP at once in one process; `code --mode rpc
 * --session <id>` continues a persisted conversation.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { cliProcesses } from './fixtures/cli-process.ts'
import { FileEventStore } from '../store/file-store.ts'

const { start, startNode, temp } = cliProcesses()

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** True while a process whose command line contains `marker` exists. */
function processWith(marker: string): boolean {
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) return true
    } catch {
      // gone
    }
  }
  return false
}

async function lastEvent(home: string) {
  const root = join(home, 'eventlog')
  const [id] = readdirSync(root).filter((n) => /^(otter|ferret)-/.test(n))
  const loaded = await new FileEventStore({ root }).load(id!)
  return loaded!.events
}

describe('termination signals', () => {
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${sig} during a turn in RPC mode: the turn is logged as cancelled, its Bash process killed, exit 0`, async () => {
      const home = temp.make('sig-home-')
      const ws = temp.make('sig-ws-')
      const marker = `chimera-sig-${sig}-${process.pid}-${Date.now()}`
      const p = start(['code', '--mode', 'rpc', '--sandbox', 'danger-full-access', '--cwd', ws], { CHIMERA_HOME: home })
      p.child.stdin.write(
        `${JSON.stringify({ type: 'prompt', id: 'p', message: `!call Bash ${JSON.stringify({ command: `sleep 300; echo ${marker}` })}` })}\n`,
      )
      await p.waitLine((m) => m.type === 'tool_execution' && m.status === 'started')
      // tool_start is written just before the process is spawned: wait until it exists.
      for (let i = 0; i < 200 && !processWith(marker); i++) await new Promise((r) => setTimeout(r, 10))
      expect(processWith(marker)).toBe(true)
      p.child.kill(sig)
      expect(await p.exit()).toBe(0)
      expect(p.lines().find((m) => m.type === 'response')).toMatchObject({
        command: 'prompt',
        id: 'p',
        success: false,
        error: 'the turn was cancelled',
      })
      const events = await lastEvent(home)
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
      expect(events.slice(-2).map((e) => e.type)).toEqual(['turn_end', 'cancelled'])
      expect(processWith(marker)).toBe(false)
      expect(p.stderr()).toContain(`received ${sig}: shutting down`)
    })
  }

  it('SIGTERM to an ACP agent (otter serve --acp) exits 0', async () => {
    const p = start(['otter', 'serve', '--acp'], { CHIMERA_HOME: temp.make('sig-acp-') })
    p.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    await p.waitLine((m) => m.id === 1)
    p.child.kill('SIGTERM')
    expect(await p.exit()).toBe(0)
  })
})

describe('a stdio client that stops reading', () => {
  it('SIGTERM still ends ferret serve when its answers fill stdout and nobody reads them', async () => {
    const home = temp.make('sig-unread-')
    const child = spawn(process.execPath, [CLI_BUNDLE, 'ferret', 'serve'], {
      env: { ...process.env, CHIMERA_HOME: home },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    try {
      child.stdout.pause() // never read: the pipe fills, then Node's own buffer
      child.stderr.resume()
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
      const init = {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: 1, clientCapabilities: {} },
      }
      let lines = JSON.stringify(init) + '\n'
      for (let i = 1; i < 2_000; i++)
        lines +=
          JSON.stringify({ jsonrpc: '2.0', id: i, method: 'session/new', params: { cwd: home, mcpServers: [] } }) + '\n'
      child.stdin.write(lines)
      // Our side buffers what it took from the pipe up to its high-water mark, then stops taking:
      // from then on the pipe fills, and the server's later answers wait in its own stdout.
      for (let i = 0; i < 1_500 && child.stdout.readableLength < child.stdout.readableHighWaterMark; i++)
        await new Promise((r) => setTimeout(r, 10))
      expect(child.stdout.readableLength).toBeGreaterThanOrEqual(child.stdout.readableHighWaterMark)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })
})

describe('ferret serve --http', () => {
  it('serves ACP on stdio and HTTP on a socket from one process; the end of its stdin pipe ends both and frees the port', async () => {
    const p = start(['ferret', 'serve', '--http', '--port', '0'], {
      CHIMERA_HOME: temp.make('ferret-both-'),
      CHIMERA_LOG_LEVEL: 'info',
    })
    p.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
    expect(await p.waitLine((m) => m.id === 1)).toMatchObject({ result: { protocolVersion: 1 } })
    const url = (await p.waitStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/)).replace(/^listening on /, '')
    expect(((await (await fetch(`${url}/health`)).json()) as { status: string }).status).toBe('ok')
    p.child.stdin.end()
    expect(await p.exit()).toBe(0)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
  })

  it('with stdin on /dev/null (a service) keeps serving HTTP until SIGTERM', async () => {
    const p = start(
      ['ferret', 'serve', '--http', '--port', '0'],
      { CHIMERA_HOME: temp.make('ferret-svc-'), CHIMERA_LOG_LEVEL: 'info' },
      'ignore',
    )
    const url = (await p.waitStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/)).replace(/^listening on /, '')
    await p.waitStderr(/serving HTTP until a signal/)
    expect((await fetch(`${url}/health`)).status).toBe(200)
    p.child.kill('SIGTERM')
    expect(await p.exit()).toBe(0)
  })

  it('an editor killed with SIGKILL takes its ferret serve --http with it: no orphan holds the port', async () => {
    // The "editor": a real process that spawns the server with its stdin a pipe it holds, then is killed.
    const editor = `const { spawn } = require('node:child_process');
const c = spawn(process.execPath, [${JSON.stringify(CLI_BUNDLE)}, 'ferret', 'serve', '--http', '--port', '0'], { stdio: ['pipe', 'ignore', 'inherit'] });
console.log(c.pid); setInterval(() => {}, 1000);`
    const p = startNode(['-e', editor], { CHIMERA_HOME: temp.make('ferret-editor-'), CHIMERA_LOG_LEVEL: 'info' })
    const url = (await p.waitStderr(/listening on (http:\/\/127\.0\.0\.1:\d+)/)).replace(/^listening on /, '')
    const serverPid = Number(await p.waitStdout(/^\d+/m))
    expect((await fetch(`${url}/health`)).status).toBe(200)
    p.child.kill('SIGKILL')
    await p.exit()
    const gone = async () => {
      for (let i = 0; i < 300; i++) {
        if (!alive(serverPid)) return true
        await new Promise((r) => setTimeout(r, 50))
      }
      return false
    }
    const exited = await gone()
    if (!exited) process.kill(serverPid, 'SIGKILL')
    expect(exited).toBe(true)
    await expect(fetch(`${url}/health`)).rejects.toThrow()
  })
})

describe('code --mode rpc --session', () => {
  it('continues a persisted conversation after a restart', async () => {
    const home = temp.make('resume-home-')
    const first = start(['code', '--mode', 'rpc'], { CHIMERA_HOME: home })
    first.child.stdin.end('{"type":"prompt","id":1,"message":"!say remembered"}\n')
    expect(await first.exit()).toBe(0)
    const [id] = readdirSync(join(home, 'eventlog'))
    const again = start(['code', '--mode', 'rpc', '--session', id!], { CHIMERA_HOME: home })
    again.child.stdin.end('{"type":"prompt","id":2,"message":"!say and more"}\n{"type":"get_state","id":3}\n')
    expect(await again.exit()).toBe(0)
    const lines = again.lines()
    // Only the new turn's events are shown; the state holds both conversations.
    expect(lines.filter((m) => m.type === 'message' && m.done === true).map((m) => m.content)).toEqual(['and more'])
    expect(lines.find((m) => m.type === 'state')).toMatchObject({
      messages: [
        { role: 'user', content: '!say remembered' },
        { role: 'assistant', content: 'remembered' },
        { role: 'user', content: '!say and more' },
        { role: 'assistant', content: 'and more' },
      ],
    })
  })
})
