/**
 * The stdio arm: spawns the CLI (the bundled `dist/chimera.mjs`, as users run it) with the
 * transcript's arguments, writes frames to its stdin and reads its stdout strictly as LF-
 * delimited JSON, through the framer the server and the clients read with
 * (client/wire/framer.ts) in its strict mode. Any stdout line that is not JSON (a blank line, a
 * BOM, invalid UTF-8, an unterminated last line) is a violation: stdout is the wire.
 */
import { release, signalGroup, supervise } from '../../../server/platform/supervisor.ts'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LineFramer, type Frame } from '../../../client/wire/framer.ts'
import type { Violation } from '../sniffer.ts'
import { Inbox } from './queue.ts'
import type { Arm } from './types.ts'

export interface FrameSniffer {
  readonly violations: Violation[]
  frame(dir: 'in' | 'out', message: unknown, opts?: { invalid?: boolean }): void
}

export interface StdioTarget {
  /** Program and leading arguments, e.g. [process.execPath, 'dist/chimera.mjs']. */
  command: string[]
  cwd?: string
  env?: Record<string, string>
}

/** The longest stdout line the kit reads (one longer is reported, not buffered). */
const MAX_LINE_BYTES = 64 * 1024 * 1024

export class StdioArm implements Arm {
  readonly name = 'stdio' as const
  readonly #child: ChildProcessWithoutNullStreams
  readonly #inbox = new Inbox<unknown>()
  readonly #sniffer: FrameSniffer
  readonly #exit: Promise<number | null>
  readonly #stray: Violation[] = []
  /** Splits what the kit sends raw, for the sniffer (as the agent's reader would split it). */
  #rawFramer = new LineFramer(MAX_LINE_BYTES)
  stderr = ''
  /** The peer's name and version from its `initialize` answer (ACP v1 `agentInfo`, seed `serverInfo`). */
  agentInfo: { name: string; version: string } | undefined
  /** The temporary CHIMERA_HOME this arm made for its child (removed on dispose). */
  readonly home: string

  readonly #ownedDirs: string[]
  readonly cwd: string

  /**
   * `ownedWorkspace`: a working directory made for this arm, removed on dispose. Without
   * `target.cwd` the arm makes (and removes) a temporary one.
   */
  constructor(target: StdioTarget, args: string[], sniffer: FrameSniffer, ownedWorkspace?: string) {
    this.#sniffer = sniffer
    // No working directory given: a temporary one, never the caller's (a test run must not
    // write into the checkout it runs from).
    const own = target.cwd === undefined ? mkdtempSync(join(tmpdir(), 'chimera-ws-')) : ownedWorkspace
    this.cwd = target.cwd ?? own!
    const [cmd, ...lead] = target.command
    this.home = mkdtempSync(join(tmpdir(), 'chimera-conf-'))
    this.#ownedDirs = own ? [this.home, own] : [this.home]
    this.#child = spawn(cmd!, [...lead, ...args], {
      cwd: this.cwd,
      env: { ...process.env, CHIMERA_HOME: this.home, ...target.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: a wrapper's grandchildren (an npm launcher's native binary, the
      // agent's tool processes) are stopped with it, never left running.
      detached: true,
    })
    if (this.#child.pid !== undefined) supervise(this.#child.pid, 'target')
    this.#exit = new Promise((resolve) => this.#child.once('exit', (code) => resolve(code)))
    this.#child.stdin.on('error', () => {})
    const framer = new LineFramer(MAX_LINE_BYTES, { strict: true })
    this.#child.stdout.on('data', (chunk: Buffer) => {
      for (const f of framer.push(chunk)) this.#frame(f)
    })
    this.#child.stdout.on('end', () => {
      for (const f of framer.end()) this.#frame(f)
      this.#inbox.close()
    })
    this.#child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString('utf8')
    })
  }

  #frame(f: Frame): void {
    if (f.kind === 'line' && !f.unterminated) return this.#line(f.text)
    const [message, why] =
      f.kind === 'line'
        ? [f.text, 'stdout ended with an unterminated line']
        : f.kind === 'too_long'
          ? [`(${f.bytes} bytes)`, `stdout carried a line that is not JSON (longer than ${MAX_LINE_BYTES} bytes)`]
          : ['(invalid UTF-8)', 'stdout carried a line that is not JSON (invalid UTF-8)']
    this.#stray.push({ dir: 'out', message, problem: why })
  }

  #line(line: string): void {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      this.#stray.push({ dir: 'out', message: line, problem: 'stdout carried a line that is not JSON' })
      return
    }
    this.#sniffer.frame('out', value)
    this.#noteAgent(value)
    this.#inbox.push(value)
  }

  #noteAgent(m: unknown): void {
    const r = (m as { result?: { agentInfo?: unknown; serverInfo?: unknown } } | null)?.result
    const info = (r?.agentInfo ?? r?.serverInfo) as { name?: unknown; version?: unknown } | undefined
    if (this.agentInfo || typeof info?.name !== 'string') return
    this.agentInfo = { name: info.name, version: typeof info.version === 'string' ? info.version : '' }
  }

  async send(message: unknown, opts: { invalid?: boolean }): Promise<void> {
    this.#sniffer.frame('in', message, opts)
    await this.#write(Buffer.from(`${JSON.stringify(message)}\n`))
  }

  /** Raw sends are sniffed too (as intentionally invalid, so only ids and dialect are learnt). */
  #sniffRaw(bytes: Buffer, final = false): void {
    for (const f of final ? this.#rawFramer.end() : this.#rawFramer.push(bytes)) {
      if (f.kind !== 'line') continue
      try {
        this.#sniffer.frame('in', JSON.parse(f.text), { invalid: true })
      } catch {
        // not JSON: nothing for the sniffer to learn
      }
    }
  }

  async sendRaw(bytes: Buffer, chunks?: number[]): Promise<void> {
    if (bytes.length < 4 * 1024 * 1024) this.#sniffRaw(bytes)
    if (!chunks?.length) return this.#write(bytes)
    let at = 0
    for (let i = 0; at < bytes.length; i++) {
      const size = chunks[Math.min(i, chunks.length - 1)]!
      await this.#write(bytes.subarray(at, at + size))
      at += size
      await new Promise((r) => setTimeout(r, 2))
    }
  }

  #write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => this.#child.stdin.write(bytes, (err) => (err ? reject(err) : resolve())))
  }

  next(ms: number): Promise<unknown> {
    return this.#inbox.next(ms)
  }

  async closeInput(): Promise<void> {
    this.#sniffRaw(Buffer.alloc(0), true)
    this.#child.stdin.end()
  }

  async exitCode(ms: number): Promise<number | null | undefined> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<undefined>((r) => {
      timer = setTimeout(() => r(undefined), ms)
    })
    try {
      return await Promise.race([this.#exit, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  violations(): Violation[] {
    return [...this.#stray, ...this.#sniffer.violations]
  }

  /** The last lines of the peer's stderr, for a failure report. */
  diagnostics(): string[] {
    return this.stderr
      .trim()
      .split('\n')
      .slice(-5)
      .filter(Boolean)
      .map((l) => `stderr: ${l.slice(0, 300)}`)
  }

  async dispose(): Promise<void> {
    await this.#stop()
    // What is left of its group goes too.
    this.#killGroup('SIGKILL')
    if (this.#child.pid !== undefined) release(this.#child.pid)
    // A grandchild (a wrapper's native binary) may still hold the pipes open: stop reading them.
    this.#child.stdout.destroy()
    this.#child.stderr.destroy()
    this.#inbox.close()
    for (const d of this.#ownedDirs) rmSync(d, { recursive: true, force: true })
  }

  async #stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return
    this.#child.stdin.end()
    if ((await this.exitCode(3000)) !== undefined) return
    this.#killGroup('SIGTERM')
    if ((await this.exitCode(2000)) !== undefined) return
    this.#killGroup('SIGKILL')
    await this.#exit
  }

  #killGroup(signal: NodeJS.Signals): void {
    if (this.#child.pid !== undefined) signalGroup(this.#child.pid, signal)
  }
}
