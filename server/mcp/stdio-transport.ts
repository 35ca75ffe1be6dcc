/**
 * The stdio transport of an MCP server, spawned in a process group of its own. The SDK's
 * `StdioClientTransport` signals only its direct child, so a server started through a wrapper
 * (`sh -c`, npx, uvx: the usual way) left its real process running after close, and that
 * process kept our pipe open, so Chimera never exited. Here the whole group is signalled:
 * stdin ends, then SIGTERM, then SIGKILL, and whatever is left of the group is killed.
 * Framing is the SDK's own (`ReadBuffer`, `serializeMessage`); the environment is the SDK's
 * default inheritable set plus the server's own variables, as with its transport.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { PassThrough } from 'node:stream'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { signalGroup } from '../platform/supervisor.ts'

/** How long each step of a close waits for the group to end. */
const CLOSE_STEP_MS = 2000

export interface GroupStdioOptions {
  command: string
  args: string[]
  env: Record<string, string>
  cwd: string
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  /** The server's stderr (piped: read it before `start`). */
  readonly stderr = new PassThrough()
  readonly #o: GroupStdioOptions
  readonly #buffer = new ReadBuffer()
  #child: ChildProcess | undefined
  #exited: Promise<void> | undefined

  constructor(o: GroupStdioOptions) {
    this.#o = o
  }

  get pid(): number | null {
    return this.#child?.pid ?? null
  }

  start(): Promise<void> {
    if (this.#child) throw new Error('the MCP stdio transport is already started')
    return new Promise((resolve, reject) => {
      const child = spawn(this.#o.command, this.#o.args, {
        env: { ...getDefaultEnvironment(), ...this.#o.env },
        cwd: this.#o.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      })
      this.#child = child
      this.#exited = new Promise((r) => child.once('exit', () => r()))
      child.once('error', (err) => {
        reject(err)
        this.onerror?.(err)
      })
      child.once('spawn', () => resolve())
      child.once('close', () => {
        this.#child = undefined
        this.onclose?.()
      })
      child.stdin!.on('error', (err) => this.onerror?.(err))
      child.stdout!.on('error', (err) => this.onerror?.(err))
      child.stdout!.on('data', (chunk: Buffer) => {
        try {
          this.#buffer.append(chunk)
        } catch (err) {
          // A line over the buffer limit (10 MiB): the server is broken; end it.
          this.onerror?.(err as Error)
          void this.close()
          return
        }
        // A line that is not a message is reported and skipped; the lines after it still count.
        for (;;) {
          try {
            const m = this.#buffer.readMessage()
            if (m === null) break
            this.onmessage?.(m)
          } catch (err) {
            this.onerror?.(err as Error)
          }
        }
      })
      child.stderr!.pipe(this.stderr)
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      const stdin = this.#child?.stdin
      if (!stdin || stdin.destroyed) throw new Error('the MCP server is not running')
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  async close(): Promise<void> {
    const child = this.#child
    const exited = this.#exited
    this.#buffer.clear()
    if (!child || !exited || child.pid === undefined) return
    const pid = child.pid
    const waitExit = (): Promise<boolean> =>
      Promise.race([
        exited.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), CLOSE_STEP_MS).unref()),
      ])
    try {
      child.stdin?.end()
    } catch {
      // already closed
    }
    if (child.exitCode === null && child.signalCode === null && !(await waitExit())) {
      signalGroup(pid, 'SIGTERM')
      if (!(await waitExit())) signalGroup(pid, 'SIGKILL')
    }
    // The leader is gone; what it started (a wrapper's real server) goes with it.
    signalGroup(pid, 'SIGKILL')
    child.stdout?.destroy()
    child.stderr?.destroy()
  }
}
