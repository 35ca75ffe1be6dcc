/**
 * A JSON-RPC peer over a harness arm: the stdio arm of a spawned process (ACP and the JSON-lines
 * RPC: strict LF framing, every frame through the sniffer, stray stdout lines reported, a
 * temporary CHIMERA_HOME, clean stop) or an ACP network arm (acp-http, acp-ws: the SDK's client
 * transports), plus a pump that hands each received frame to the adapter, and JSON-RPC
 * request/response bookkeeping.
 */
import type { Arm } from '../../harness/arms/types.ts'

/** What a peer needs of its arm beyond the replayer's: the agent's handshake name, and diagnostics. */
export interface PeerArm extends Arm {
  readonly agentInfo: { name: string; version: string } | undefined
  /** The last lines that explain an end (the process's stderr, the connection's error). */
  diagnostics(): string[]
}

export class PeerClosed extends Error {
  override name = 'PeerClosed'
}

export class Peer {
  readonly arm: PeerArm
  readonly #pending = new Map<string, { resolve: (m: Record<string, any>) => void; reject: (e: Error) => void }>()
  readonly #log: string[] = []
  #nextId = 1
  #closed = false
  readonly #pump: Promise<void>

  constructor(arm: PeerArm, onFrame: (m: Record<string, any>) => void) {
    this.arm = arm
    this.#pump = (async () => {
      for (;;) {
        const asked = Date.now()
        const m = await arm.next(60_000)
        if (m === undefined) {
          // An early empty answer means the output ended; a full wait is only silence.
          if (this.#closed || Date.now() - asked < 59_000) break
          continue
        }
        this.#note('<<', m)
        if (typeof m === 'object' && m !== null && !Array.isArray(m)) {
          const f = m as Record<string, any>
          const key = f.method === undefined && 'id' in f ? JSON.stringify(f.id) : undefined
          const waiter = key !== undefined ? this.#pending.get(key) : undefined
          if (waiter) {
            this.#pending.delete(key!)
            waiter.resolve(f)
          }
          onFrame(f)
        }
      }
      this.#closed = true
      for (const w of this.#pending.values())
        w.reject(new PeerClosed(`the agent closed its output (or the connection)${this.#exitNote()}`))
      this.#pending.clear()
    })()
  }

  #exitNote(): string {
    const err = this.arm.diagnostics().slice(-3).join(' | ')
    return err ? ` (${err.slice(0, 500)})` : ''
  }

  #note(dir: string, m: unknown): void {
    this.#log.push(`${dir} ${JSON.stringify(m).slice(0, 300)}`)
    if (this.#log.length > 40) this.#log.shift()
  }

  get closed(): boolean {
    return this.#closed
  }

  async send(frame: unknown): Promise<void> {
    if (this.#closed) throw new PeerClosed(`cannot send: the agent has exited${this.#exitNote()}`)
    this.#note('>>', frame)
    await this.arm.send(frame, {})
  }

  /** Send a JSON-RPC request; resolves with the whole response frame (result or error). */
  async request(method: string, params: unknown, timeoutMs: number): Promise<Record<string, any>> {
    const id = this.#nextId++
    const reply = new Promise<Record<string, any>>((resolve, reject) =>
      this.#pending.set(JSON.stringify(id), { resolve, reject }),
    )
    await this.send({ jsonrpc: '2.0', id, method, params })
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_r, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no response to ${method} within ${timeoutMs} ms${this.#exitNote()}`)),
        timeoutMs,
      )
    })
    try {
      return await Promise.race([reply, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Send a request and return its id without waiting (the reply reaches onFrame). */
  async requestNoWait(method: string, params: unknown): Promise<number> {
    const id = this.#nextId++
    await this.send({ jsonrpc: '2.0', id, method, params })
    return id
  }

  transcript(): string[] {
    return [...this.#log, ...this.arm.diagnostics()]
  }

  async dispose(): Promise<void> {
    this.#closed = true
    await this.arm.dispose()
    await this.#pump
  }
}
