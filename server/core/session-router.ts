/**
 * Any instance serves any session (docs/scale-out.md, docs/decisions/0331-forwarding-through-redis.md,
 * docs/decisions/0365-one-forwarding-path.md): with several instances over one store, a command
 * for a session runs on the one instance that holds the session's lease. This is the one place
 * that routes it, for every transport: where the command arrives the instance claims the lease
 * (a session nobody runs is claimed by it, which first takes it over: a fresh copy, a turn its
 * dead owner left open closed with an `error`); if another instance holds it, a payload is sent
 * to that instance through the forwarding channel (Redis lists, store/redis-bus.ts) and its
 * answer returned. Two kinds of payload travel: an HTTP request (the HTTP layer's, run by the
 * owner's own app: http/forward.ts) and the session operations below (`prompt`, `cancel`,
 * `permission`, `steer`, `model`, `mode`, `approval`, `compact`), which ACP connections use, so
 * an ACP prompt on any instance runs where the session runs while the connection follows its
 * events from the shared store, and a steer, a compaction or a settings change acts on the
 * owner's copy, not a stale one here.
 *
 * The results travel typed: each operation's answer is the shape the spec names for it
 * (`SessionResultByOp`), checked where it arrives; one that does not match is an error for the
 * client (the operation ran on the owner; its answer could not be read), never a value handed on.
 * An owner that speaks another version of the link refuses the command (store/redis-bus.ts) and
 * the client is told which instance runs which version (decision 0440).
 *
 * Waits are bounded: an owner that dies before taking the payload loses it to the next claim (its
 * lease runs out, the payload is withdrawn and routed again, here); one that dies after taking it
 * is `store_unavailable` saying the command may or may not have taken effect. A command waits at
 * most FORWARD_TIMEOUT_MS for its answer, except a prompt, whose answer is its turn's outcome: it
 * waits as long as the owner holds the session (a turn may wait on a person for a permission).
 */
import { randomUUID } from '../platform/random.ts'
import { ChimeraError } from '../errors.ts'
import type { Logger } from '../log.ts'
import type { BusRequestOptions, BusResult } from '../store/redis-bus.ts'
import type { LeaseClaim, SessionLeases } from '../store/types.ts'
import type { ApprovalPolicy, PermissionDecision } from './permissions.ts'
import {
  INSTANCE_LINK_VERSION,
  RoutedCommandSchema,
  SessionAnswerSchema,
  SessionOpSchema,
  SessionResultByOpSchema,
  UnsupportedSchema,
  type ForwardedError,
  type RoutedCommand,
  type SessionAnswer,
  type SessionOp,
  type SessionResultByOp,
  type Unsupported,
} from '../../generated/instances/forward.gen.ts'
import { shapeMember } from '../../generated/lazy-schema.gen.ts'
import { formatIssues } from '../../client/wire/issues.ts'
import type { Session } from './session.ts'

/** What a forwarded operation answers here when this instance no longer holds the session. */
const NOT_OWNER = Symbol('not owner')

/** How long a forwarded command may wait for its owner's answer (a prompt: see the file comment). */
export const FORWARD_TIMEOUT_MS = 30_000
/** How often a waiting requester checks that the owner still holds the session. */
const POLL_MS = 250
/** Claim-or-forward rounds before giving up (the owner changed under each). */
const ROUNDS = 4

/** The forwarding channel (redis-bus.ts `RedisBus`). */
export interface Forwarder {
  request(target: string, payload: RoutedCommand, opts: BusRequestOptions): Promise<BusResult>
}

/** Opens the channel; payloads addressed to this instance go to `handle`. */
export type ForwardConnect = (handle: (payload: unknown) => Promise<unknown>) => Forwarder

/** What the router needs of the session manager. */
export interface RoutedManager {
  get(id: string): Promise<Session>
  takeOver(id: string, length: number): Promise<void>
}

/**
 * What travels between instances is specs/asyncapi/instances.asyncapi.yaml: a routed command
 * (`kind`: which handler on the owner runs it), a session operation (`SessionOp`) and its answer
 * (`SessionAnswer`), or `Unsupported` when the owner serves no handler of the kind.
 */
type Answer = SessionAnswer | Unsupported

/** A session operation's name (`op`), and what it answers (the spec's `SessionResultByOp`). */
type OpName = SessionOp['op']
type ResultOf<O extends OpName> = SessionResultByOp[O]

/** How one command is routed (see {@link SessionRouter.route}). */
export interface Route<T> {
  /** Run it here: this instance holds the session's lease (or there are no leases). */
  local(): Promise<T>
  /** What travels to the owner (built once, on the first forward). */
  payload(): RoutedCommand | Promise<RoutedCommand>
  /** The owner's (`owner`) answer; undefined: the owner no longer holds the session (route again). */
  answer(reply: unknown, owner: string): T | undefined
  /** It arrived forwarded from another instance: never forwarded again, `notOwner` answers instead. */
  notOwner?: () => T
  /** What to call it in messages (`this request`, `this prompt`). */
  what?: string
  /** Wait for the owner's answer as long as it holds the session (a prompt: its turn). */
  unbounded?: boolean
  /**
   * A read: never takes the lease. Forwarded to the instance that holds it, else run here on this
   * instance's copy (which the manager reloads from the store when another instance ran turns).
   */
  read?: boolean
}

export class SessionRouter {
  readonly #manager: RoutedManager
  readonly #leases: SessionLeases | undefined
  readonly #logger: Logger
  readonly #forwarder: Forwarder | undefined
  readonly #handlers = new Map<string, (body: unknown) => Promise<unknown>>()
  readonly #timeoutMs: number

  constructor(o: {
    manager: RoutedManager
    leases?: SessionLeases
    connect?: ForwardConnect
    logger: Logger
    /** How long a forwarded command waits for its owner's answer (default FORWARD_TIMEOUT_MS). */
    timeoutMs?: number
  }) {
    this.#manager = o.manager
    this.#timeoutMs = o.timeoutMs ?? FORWARD_TIMEOUT_MS
    this.#leases = o.leases
    this.#logger = o.logger
    this.#handlers.set('session', (body) => {
      const op = SessionOpSchema.safeParse(body)
      return op.success
        ? this.#serveOp(op.data)
        : Promise.resolve({ error: { message: 'not a session operation' } } satisfies Answer)
    })
    this.#forwarder = o.leases && o.connect?.((payload) => this.#serve(payload))
  }

  /** True when the session runs on this instance (or there is one instance): its state here is current. */
  runsHere(id: string): boolean {
    return !this.#leases || this.#leases.holds(id)
  }

  /** Run forwarded payloads of `kind` here (the HTTP layer: its app answers forwarded requests). */
  serve(kind: string, handle: (body: unknown) => Promise<unknown>): void {
    this.#handlers.set(kind, handle)
  }

  /** A payload of `kind` as it travels to the owner. */
  envelope(kind: string, body: unknown): RoutedCommand {
    return { kind, body } satisfies RoutedCommand
  }

  /**
   * Run `r.local` here when this instance holds (or can claim) the session's lease, else send
   * `r.payload()` to the instance that holds it and return `r.answer` of its reply.
   */
  async route<T>(id: string, r: Route<T>): Promise<T> {
    const leases = this.#leases
    if (!leases) return r.local()
    const what = r.what ?? 'this request'
    let payload: RoutedCommand | undefined
    for (let round = 0; round < ROUNDS; round++) {
      const claim = r.read ? await this.#readClaim(id, leases) : await leases.claim(id)
      if (claim.kind === 'none') return r.local()
      if (claim.kind === 'mine')
        // In use from the claim on: the idle release cannot slip in before the command runs.
        return leases.using(id, async () => {
          if (claim.fresh) await this.#manager.takeOver(id, claim.length)
          else await this.#manager.get(id).catch(() => {})
          return r.local()
        })
      if (r.notOwner) return r.notOwner()
      if (!this.#forwarder)
        throw ownerFailed(`session ${id} is running on another instance; retry once its turn has ended`)
      payload ??= await r.payload()
      const owner = claim.owner
      const res = await this.#forwarder.request(owner, payload, {
        ownerAlive: async () => (await leases.owner(id)) === owner,
        ownerRunning: () => leases.instanceAlive(owner),
        timeoutMs: r.unbounded ? Infinity : this.#timeoutMs,
        pollMs: POLL_MS,
      })
      if (res.kind === 'withdrawn') continue
      if (res.kind === 'lost')
        throw ownerFailed(
          `the instance running session ${id} stopped while handling ${what} (it may or may not have taken effect); retry`,
        )
      if (res.kind === 'timeout')
        throw ownerFailed(
          `the instance running session ${id} did not answer within ${this.#timeoutMs / 1000} s (${res.ran ? `it had taken ${what}: it may or may not have taken effect` : `it had not taken ${what}, which was withdrawn: it did not take effect`}); retry`,
        )
      if (res.kind === 'incompatible')
        throw ownerFailed(
          `session ${id} is running on instance ${owner}, which runs an incompatible version (instance link version ${res.version}; this instance speaks ${INSTANCE_LINK_VERSION}): nothing was run; retry once that instance has let the session go (idle) or been upgraded`,
        )
      const unsupported = UnsupportedSchema.safeParse(res.payload)
      if (unsupported.success)
        throw ownerFailed(
          `session ${id} is running on an instance that does not serve ${unsupported.data.unsupported} commands; retry once its turn has ended`,
        )
      const a = r.answer(res.payload, owner)
      if (a !== undefined) return a
    }
    throw ownerFailed(`session ${id} changed hands ${ROUNDS} times while ${what} was routed; retry`)
  }

  /** Where a read goes: to the lease's holder when that is another instance, else here (`none`: nothing claimed). */
  async #readClaim(id: string, leases: SessionLeases): Promise<LeaseClaim> {
    const owner = leases.holds(id) ? leases.instanceId : await leases.owner(id)
    return owner && owner !== leases.instanceId ? { kind: 'other', owner } : { kind: 'none' }
  }

  /**
   * Submit a prompt to the session wherever it runs: `done` resolves with its turn's outcome once
   * the turn ended (on the owner), and the seq of the last event stored by then, so a connection
   * following the session's events knows when it has written them all.
   */
  prompt(id: string, text: string): { messageId: string; done: Promise<ResultOf<'prompt'>> } {
    const messageId = `msg-${randomUUID()}`
    const done = this.#op({ op: 'prompt', id, text, messageId }, 'this prompt', { unbounded: true })
    return { messageId, done }
  }

  /** Cancel the session's running turn wherever it runs; false when nothing was running. */
  cancel(id: string): Promise<ResultOf<'cancel'>> {
    return this.#op({ op: 'cancel', id }, 'this cancel')
  }

  /** Answer a pending permission request wherever its session runs; false when it is not pending (first answer wins). */
  replyPermission(
    id: string,
    requestId: string,
    decision: PermissionDecision,
    source: string,
  ): Promise<ResultOf<'permission'>> {
    return this.#op({ op: 'permission', id, requestId, decision, source }, 'this permission reply')
  }

  /**
   * Send a message to the session's running turn wherever it runs (Session.steer): false when no
   * turn is running there; true once the owner wrote the steer's queue entry.
   */
  steer(id: string, text: string): Promise<ResultOf<'steer'>> {
    return this.#op({ op: 'steer', id, text }, 'this steer')
  }

  /** Set the session's model wherever it runs; its model and mode after the change. */
  setModel(id: string, model: string): Promise<ResultOf<'model'>> {
    return this.#op({ op: 'model', id, value: model }, 'this model change')
  }

  /** Set the session's mode wherever it runs; its model and mode after the change. */
  setMode(id: string, mode: string): Promise<ResultOf<'mode'>> {
    return this.#op({ op: 'mode', id, value: mode }, 'this mode change')
  }

  /** Set the session's approval policy wherever it runs; the policy before and after. */
  setApproval(id: string, policy: ApprovalPolicy): Promise<ResultOf<'approval'>> {
    return this.#op({ op: 'approval', id, value: policy }, 'this approval change')
  }

  /** Compact the session's history wherever it runs (Session.compact): the event that records it. */
  compact(id: string): Promise<ResultOf<'compact'>> {
    return this.#op({ op: 'compact', id }, 'this compaction')
  }

  /**
   * Read the session where it runs: its owner's copy (another instance's, or a fresh copy here),
   * not a copy this instance loaded earlier and has not kept up with; `messages` adds the history.
   */
  read(id: string, messages: boolean): Promise<ResultOf<'state'>> {
    return this.#op({ op: 'state', id, messages }, 'this read')
  }

  /** Route a session operation: its result, run here or read from the owner's answer (checked against its op's). */
  #op<O extends OpName, N = never>(
    op: SessionOp & { op: O },
    what: string,
    o: { unbounded?: boolean; notOwner?: () => N } = {},
  ): Promise<ResultOf<O> | N> {
    return this.route<ResultOf<O> | N>(op.id, {
      what,
      unbounded: o.unbounded ?? false,
      read: op.op === 'state',
      local: () => this.#run(op) as Promise<ResultOf<O>>,
      payload: () => this.envelope('session', op),
      answer: (reply, owner) => {
        const r = SessionAnswerSchema.safeParse(reply)
        if (!r.success) throw ownerFailed(`the instance running session ${op.id} failed to answer; retry`)
        const a = r.data
        if ('notOwner' in a) return undefined
        if ('error' in a) throw toError(a.error)
        const ok = shapeMember(SessionResultByOpSchema, op.op).safeParse(a.ok)
        if (ok.success) return ok.data as ResultOf<O>
        this.#logger.warn(
          `forwarding: instance ${owner} answered ${what} on session ${op.id} with a result that is not a ${op.op} result`,
          {
            issues: formatIssues(ok.error.issues),
          },
        )
        throw ownerFailed(
          `instance ${owner}, running session ${op.id}, answered ${what} with a result this instance cannot read (${what} ran there): the two may run incompatible versions`,
        )
      },
      ...(o.notOwner ? { notOwner: o.notOwner } : {}),
    })
  }

  /** Run a session operation on this instance (it holds the session, or nobody does). */
  async #run(op: SessionOp): Promise<ResultOf<OpName>> {
    const s = await this.#manager.get(op.id)
    switch (op.op) {
      case 'prompt': {
        // Answered once the turn's events are on disk (`ended`): its undo snapshot is still being
        // written (the session's next work waits for it), its summary is due (decision 0495).
        const submitted = s.prompt(op.text, op.messageId)
        const outcome = await (submitted.ended ?? submitted.done)
        if (!submitted.ended) await s.flush()
        return { outcome, lastSeq: s.lastSeq } satisfies ResultOf<'prompt'>
      }
      case 'cancel':
        return s.cancel()
      case 'permission':
        return s.replyPermission(op.requestId, op.decision, op.source)
      case 'steer':
        return s.steer(op.text)
      case 'model':
      case 'mode':
        await (op.op === 'model' ? s.setModel(op.value) : s.setMode(op.value))
        return { model: s.model, mode: s.mode } satisfies ResultOf<'model' | 'mode'>
      case 'compact':
        return s.compact()
      case 'approval': {
        const old = s.approval
        await s.setApproval(op.value)
        return { old, new: s.approval } satisfies ResultOf<'approval'>
      }
      case 'state':
        return {
          model: s.model,
          mode: s.mode,
          status: s.status,
          lastSeq: s.lastSeq,
          summary: s.summary,
          ...(op.messages ? { messages: s.messages() } : {}),
        } satisfies ResultOf<'state'>
    }
  }

  /** A session operation another instance forwarded here: run if this instance still holds the session. */
  async #serveOp(op: SessionOp): Promise<Answer> {
    try {
      // Forwarded here: never forwarded again; an instance that no longer holds the session says so.
      const r = await this.#op(op, 'this request', { notOwner: () => NOT_OWNER })
      return r === NOT_OWNER ? { notOwner: true } : { ok: r }
    } catch (err) {
      if (ChimeraError.is(err))
        return {
          error: {
            code: err.code,
            message: err.message,
            ...(err.detail !== undefined ? { detail: err.detail } : {}),
            ...(err.resource !== undefined ? { resource: err.resource } : {}),
          },
        }
      this.#logger.error('a forwarded session operation failed', err)
      return { error: { message: err instanceof Error ? err.message : String(err) } }
    }
  }

  /** A payload another instance forwarded here. */
  async #serve(payload: unknown): Promise<unknown> {
    const env = RoutedCommandSchema.safeParse(payload)
    if (!env.success) return { unsupported: 'these' } satisfies Answer
    const handle = this.#handlers.get(env.data.kind)
    if (!handle) return { unsupported: env.data.kind } satisfies Answer
    return handle(env.data.body as unknown)
  }
}

/** The error an owner answered with, raised here as it was raised there (the same code and message). */
function toError(e: ForwardedError): Error {
  if (e.code === undefined) return new Error(e.message)
  return new ChimeraError(e.code, e.message, {
    ...(e.detail !== undefined ? { detail: e.detail } : {}),
    ...(e.resource !== undefined ? { resource: e.resource } : {}),
  })
}

export const ownerFailed = (message: string): ChimeraError =>
  new ChimeraError('store_unavailable', message, { detail: { retry_after_s: 2 } })
