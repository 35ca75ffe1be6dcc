/**
 * Commands forwarded between instances through Redis (docs/scale-out.md,
 * docs/decisions/0331-forwarding-through-redis.md). Each instance has an inbox and a reply list,
 * `chimera:i:{<instance>}:inbox` and `…:replies`, and one blocking connection that pops both
 * (`BLPOP inbox replies`). A request is `RPUSH`ed to the owner's inbox; the owner runs it and
 * `RPUSH`es the answer to the requester's reply list. Lists, not pub/sub: a request waits in the
 * inbox while the owner is briefly disconnected (pub/sub would drop it), and the requester can
 * take back (`LREM`) a request its owner never popped, so a command is run at most once.
 *
 * Waits are bounded: the requester polls every `pollMs`; when the owner no longer holds the
 * session (its lease ran out: it died; or it let the lease go) a request still in the inbox is
 * withdrawn (`withdrawn`: route it again); one already popped is waited for while the owner's
 * process runs (its liveness key) and is `lost` once it is gone (its outcome is unknown); past
 * `timeoutMs` the answer is `timeout` (`ran`: the owner had popped it; otherwise it was withdrawn,
 * nothing ran: routing it to the same live owner again would only wait as long again). The
 * payload is opaque here (core/session-router.ts puts an HTTP request or a session operation in it).
 *
 * The link's version is checked here, and only here: every request and reply carries `v`
 * (`INSTANCE_LINK_VERSION`); a request of another version is not run but answered `Incompatible`,
 * which its requester's `request` returns as `incompatible` with the version the owner speaks
 * (docs/decisions/0440-instance-link-results-and-version.md).
 */
import { randomUUID } from '../platform/random.ts'
import type { RedisClientType } from '@redis/client'
import type { Logger } from '../log.ts'
import {
  BusReplySchema,
  BusRequestSchema,
  INSTANCE_LINK_VERSION,
  IncompatibleSchema,
  type BusReply,
  type BusRequest,
  type Incompatible,
  type RoutedCommand,
} from '../../generated/instances/forward.gen.ts'
import { instanceKeys, unavailable } from './redis-shared.ts'

type Client = RedisClientType

/** Seconds one `BLPOP` waits before it is reissued. */
const BLOCK_S = 1
/** A reply list nobody drains (its requester died) is dropped after this. */
const REPLY_TTL_MS = 60_000

export type BusResult =
  | { kind: 'reply'; payload: unknown }
  /** The owner never took the request (it was withdrawn): nothing ran. */
  | { kind: 'withdrawn' }
  /** The owner took the request and stopped before answering: it may or may not have run. */
  | { kind: 'lost' }
  /** No answer within the time allowed (`ran`: the owner had taken it; else it was withdrawn and nothing ran). */
  | { kind: 'timeout'; ran: boolean }
  /** The owner speaks another version of the link (`version`) and ran nothing. */
  | { kind: 'incompatible'; version: number }

export interface BusRequestOptions {
  /** Still the right instance to wait for (it holds the session's lease)? */
  ownerAlive(): Promise<boolean>
  /**
   * Does the owner's process still run? Asked once it no longer holds the lease but had taken
   * the request: a live one (it let the lease go after taking it) answers, a dead one never will.
   */
  ownerRunning(): Promise<boolean>
  timeoutMs: number
  pollMs: number
}

export interface RedisBusOptions {
  instanceId: string
  logger: Logger
  /** The command connection (pushes, `LREM`). */
  client: Client
  /** A new connection for the blocking reader. */
  reader(): Client
  /** Runs a request addressed to this instance and answers it. */
  handle(payload: unknown): Promise<unknown>
}

export class RedisBus {
  readonly #o: RedisBusOptions
  readonly #pending = new Map<string, (reply: BusReply) => void>()
  #reader: Client | undefined
  #stopped = false

  constructor(o: RedisBusOptions) {
    this.#o = o
  }

  /** Start popping this instance's inbox and replies (reconnecting with backoff). */
  start(): void {
    const { inbox, replies } = instanceKeys(this.#o.instanceId)
    const reader = this.#o.reader()
    this.#reader = reader
    reader.on('error', () => {})
    void (async () => {
      let failures = 0
      while (!this.#stopped) {
        try {
          if (!reader.isOpen) await reader.connect()
          const got = await reader.blPop([inbox, replies], BLOCK_S)
          failures = 0
          if (got) this.#receive(got.element)
        } catch (err) {
          if (this.#stopped) break
          this.#o.logger.debug('forwarding: inbox read failed; retrying', { error: String(err) })
          await pause(Math.min(50 * 2 ** Math.min(failures++, 10), 2_000))
        }
      }
      reader.destroy()
    })()
  }

  close(): void {
    this.#stopped = true
    if (this.#reader?.isOpen) this.#reader.destroy()
  }

  #receive(text: string): void {
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch {
      v = undefined
    }
    const rep = BusReplySchema.safeParse(v)
    if (rep.success) {
      this.#pending.get(rep.data.id)?.(rep.data)
      return
    }
    const req = BusRequestSchema.safeParse(v)
    if (!req.success) {
      this.#o.logger.warn('forwarding: dropped a message that is not a request or a reply', { bytes: text.length })
      return
    }
    const env = req.data
    const run = env.v === INSTANCE_LINK_VERSION ? this.#o.handle(env.payload) : Promise.resolve(this.#refuse(env))
    void run
      .catch((err: unknown) => ({ error: String(err) }))
      .then(async (payload) => {
        const reply: BusReply = { t: 'rep', id: env.id, from: this.#o.instanceId, v: INSTANCE_LINK_VERSION, payload }
        const key = instanceKeys(env.from).replies
        await this.#o.client.rPush(key, JSON.stringify(reply))
        await this.#o.client.pExpire(key, REPLY_TTL_MS)
      })
      .catch((err: unknown) => this.#o.logger.warn('forwarding: a reply could not be sent', { error: String(err) }))
  }

  /** A request of a version of the link this instance does not speak: run nothing, say so. */
  #refuse(env: BusRequest): Incompatible {
    this.#o.logger.warn('forwarding: refused a request of another version of the instance link', {
      from: env.from,
      version: env.v,
      speaks: INSTANCE_LINK_VERSION,
    })
    return { incompatible: true }
  }

  /** Send `payload` to `target`'s inbox and wait for its answer (bounded; see the file comment). */
  async request(target: string, payload: RoutedCommand, opts: BusRequestOptions): Promise<BusResult> {
    const id = randomUUID()
    const text = JSON.stringify({
      t: 'req',
      id,
      from: this.#o.instanceId,
      v: INSTANCE_LINK_VERSION,
      payload,
    } satisfies BusRequest)
    const inbox = instanceKeys(target).inbox
    let answer: ((reply: BusReply) => void) | undefined
    const replied = new Promise<BusReply>((resolve) => (answer = resolve))
    this.#pending.set(id, answer!)
    const within = async (ms: number): Promise<BusResult | undefined> => {
      let timer: NodeJS.Timeout | undefined
      const r = await Promise.race([
        replied.then(resultOf),
        new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), ms)
        }),
      ])
      clearTimeout(timer)
      return r
    }
    const withdraw = async (): Promise<boolean> => (await this.#o.client.lRem(inbox, 1, text)) > 0
    try {
      try {
        await this.#o.client.rPush(inbox, text)
        // A dead instance's inbox (requests carry their bearer token) does not outlive its use.
        await this.#o.client.pExpire(inbox, REPLY_TTL_MS)
      } catch (err) {
        throw unavailable(err)
      }
      const deadline = Date.now() + opts.timeoutMs
      for (;;) {
        const r = await within(opts.pollMs)
        if (r) return r
        if (Date.now() >= deadline) {
          const unsent = await withdraw().catch(() => false)
          return { kind: 'timeout', ran: !unsent }
        }
        let alive = true
        try {
          alive = await opts.ownerAlive()
        } catch {
          // Redis unreachable: keep waiting (bounded by the deadline).
        }
        if (alive) continue
        if (await withdraw().catch(() => false)) return { kind: 'withdrawn' }
        // Taken by the owner: its answer is waited for while its process runs (bounded by the
        // deadline); once it is gone, one more poll for an answer it may have sent before.
        for (;;) {
          const late = await within(opts.pollMs)
          if (late) return late
          if (Date.now() >= deadline) return { kind: 'timeout', ran: true }
          const running = await opts.ownerRunning().catch(() => true)
          if (running) continue
          const last = await within(opts.pollMs)
          return last ?? { kind: 'lost' }
        }
      }
    } finally {
      this.#pending.delete(id)
    }
  }
}

/** A reply as the requester sees it: the owner's answer, or its refusal of the request's version. */
const resultOf = (reply: BusReply): BusResult =>
  IncompatibleSchema.safeParse(reply.payload).success
    ? { kind: 'incompatible', version: reply.v }
    : { kind: 'reply', payload: reply.payload as unknown }

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref())
