/**
 * The replayer: runs a transcript's steps on one arm and fails with the step's file and line
 * on the first mismatch, silence, or contract violation seen by the sniffer.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { AcpSniffer, RpcSniffer } from './sniffer.ts'
import { HttpArm } from './arms/http.ts'
import { SseArm } from './arms/sse.ts'
import { StdioArm, type StdioTarget } from './arms/stdio.ts'
import type { Arm } from './arms/types.ts'
import { describeMismatches, match, substitute, type Vars } from './matcher.ts'
import { inProcessTarget, socketTarget, cliTarget } from './targets.ts'
import type { ArmName, Step, Transcript } from './transcript.ts'

/** How long an `expect` waits by default. */
export const DEFAULT_WAIT_MS = 5000

export class ReplayError extends Error {
  override name = 'ReplayError'
}

/** Start the arm a transcript needs, against this repository's Chimera. */
export async function startArm(t: Transcript, arm: ArmName, stdio?: StdioTarget): Promise<Arm> {
  switch (arm) {
    case 'http-inprocess':
      return new HttpArm(arm, inProcessTarget(t.header.server))
    case 'http-socket':
      return new HttpArm(arm, await socketTarget(t.header.server))
    case 'sse-inprocess':
      return new SseArm(arm, inProcessTarget(t.header.server))
    case 'sse-socket':
      return new SseArm(arm, await socketTarget(t.header.server))
    case 'stdio': {
      const sniffer = t.header.surface === 'rpc' ? new RpcSniffer() : new AcpSniffer()
      const target = stdio ?? cliTarget(t.header.env)
      const cwd = t.header.workspace ? makeWorkspace(t.header.workspace.files) : target.cwd
      return new StdioArm({ ...target, cwd }, t.header.launch ?? [], sniffer, cwd !== target.cwd ? cwd : undefined)
    }
    case 'acp-http':
    case 'acp-ws':
      throw new ReplayError(`${t.file}: the ${arm} arm runs in the conformance kit, against a served /acp URL`)
  }
}

/** The bytes of a `sendRaw` step. */
export function rawBytes(raw: Extract<Step, { sendRaw: unknown }>['sendRaw']): Buffer {
  if (typeof raw === 'string') return Buffer.from(raw, 'utf8')
  if ('base64' in raw) return Buffer.from(raw.base64, 'base64')
  const prefix = Buffer.from(raw.prefix, 'utf8')
  const suffix = Buffer.from(raw.suffix, 'utf8')
  if (prefix.length + suffix.length > raw.bytes)
    throw new Error(`sendRaw: prefix and suffix (${prefix.length + suffix.length} bytes) exceed bytes (${raw.bytes})`)
  const body = Buffer.alloc(Math.max(0, raw.bytes - prefix.length - suffix.length), raw.fill)
  return Buffer.concat([prefix, body, suffix])
}

/** A temporary working directory holding `files` (removed by the arm on dispose). */
function makeWorkspace(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'chimera-ws-'))
  for (const [rel, content] of Object.entries(files)) {
    const p = join(dir, rel)
    if (!p.startsWith(dir + sep)) throw new Error(`workspace file ${rel} escapes the workspace`)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, content)
  }
  return dir
}

const where = (t: Transcript, s: Step): string => `${t.file}:${s.line ?? '?'}`

/** How a replay waits (the conformance kit's `--timeout` and start-up grace; the harness's defaults). */
export interface ReplayOptions {
  /** An `expect`'s wait, and the least any step waits for an answer (default DEFAULT_WAIT_MS). */
  waitMs?: number
  /** Extra wait for the peer's first answer (a freshly started process may take a while). */
  startupGraceMs?: number
  /** Leave out steps that check another requirement (`"requirement"`): the kit reports each requirement alone. */
  ownRequirementOnly?: boolean
}

/** Per replay: waits as the options say, and the start-up grace until the first answer came. */
class Waits {
  #answered = false
  readonly #o: ReplayOptions
  constructor(o: ReplayOptions) {
    this.#o = o
  }
  /** A step's wait: its own `within` (when given), never less than the run's wait. */
  of(within: number | undefined): number {
    const base = this.#o.waitMs ?? DEFAULT_WAIT_MS
    return within === undefined ? base : this.#o.waitMs === undefined ? within : Math.max(within, base)
  }
  /** The next item, with the start-up grace added until the peer has answered once. */
  async next(arm: Arm, ms: number, reply = false): Promise<unknown> {
    const wait = this.#answered ? ms : ms + (this.#o.startupGraceMs ?? 0)
    const got = await (reply && arm.nextReply ? arm.nextReply(wait) : arm.next(wait))
    if (got !== undefined) this.#answered = true
    return got
  }
}

/** A pattern of an HTTP reply (it names a `status`), not of a stream record or a frame. */
function isReplyPattern(p: unknown): boolean {
  return typeof p === 'object' && p !== null && !Array.isArray(p) && 'status' in p
}

/** A step's `when`: every named capture matches its pattern (captures in the patterns are kept). */
function applies(step: Step, vars: Vars): boolean {
  if (!('when' in step) || !step.when) return true
  const trial = new Map(vars)
  for (const [name, pattern] of Object.entries(step.when)) {
    if (!trial.has(name) || match(pattern, trial.get(name), trial).length) return false
  }
  for (const [k, v] of trial) vars.set(k, v)
  return true
}

async function runStep(t: Transcript, arm: Arm, step: Step, vars: Vars, w: Waits): Promise<void> {
  if ('send' in step) return arm.send(substitute(step.send, vars), { invalid: step.invalid })
  if ('sendRaw' in step) {
    const raw = step.sendRaw
    const bytes = rawBytes(raw)
    return arm.sendRaw(bytes, step.chunks)
  }
  if ('expect' in step) {
    const wait = w.of(step.within)
    const deadline = Date.now() + wait
    // An expected HTTP reply is the send's answer: records of an open stream that beat it over
    // their own connection are left for the expectations that follow.
    const reply = isReplyPattern(step.expect) && arm.nextReply !== undefined
    for (let skipped = 0; ; skipped++) {
      const got = await w.next(arm, Math.max(1, deadline - Date.now()), reply)
      if (got === undefined)
        throw new ReplayError(
          `${where(t, step)}: expected ${JSON.stringify(step.expect)}, but nothing ${skipped ? 'matching ' : ''}arrived within ${wait} ms${skipped ? ` (${skipped} skipped)` : ''}`,
        )
      const trial = new Map(vars)
      const ms = match(step.expect, got, trial)
      if (!ms.length) {
        for (const [k, v] of trial) vars.set(k, v)
        return
      }
      if (!step.skipping)
        throw new ReplayError(
          `${where(t, step)}: received ${JSON.stringify(got).slice(0, 600)}\n${describeMismatches(ms)}`,
        )
    }
  }
  if ('expectUnordered' in step) {
    // The HTTP replies among them first (each the next reply, whatever records came before it),
    // then the rest in any order.
    const replies = arm.nextReply ? step.expectUnordered.filter(isReplyPattern) : []
    for (const pattern of replies) {
      const got = await w.next(arm, w.of(step.within), true)
      const ms = got === undefined ? [] : match(pattern, got, vars)
      if (got === undefined || ms.length)
        throw new ReplayError(
          got === undefined
            ? `${where(t, step)}: expected a reply matching ${JSON.stringify(pattern)}, but nothing arrived within ${w.of(step.within)} ms`
            : `${where(t, step)}: received ${JSON.stringify(got).slice(0, 600)}\n${describeMismatches(ms)}`,
        )
    }
    const left = step.expectUnordered.filter((p) => !replies.includes(p))
    while (left.length) {
      const got = await w.next(arm, w.of(step.within))
      if (got === undefined)
        throw new ReplayError(
          `${where(t, step)}: expected ${left.length} more item(s) matching ${JSON.stringify(left)}, but nothing arrived within ${w.of(step.within)} ms`,
        )
      const i = left.findIndex((p) => match(p, got, new Map(vars)).length === 0)
      if (i === -1)
        throw new ReplayError(
          `${where(t, step)}: received ${JSON.stringify(got).slice(0, 600)}, which matches none of ${JSON.stringify(left).slice(0, 600)}`,
        )
      match(left[i], got, vars)
      left.splice(i, 1)
    }
    return
  }
  if ('expectNone' in step) {
    const got = await arm.next(step.expectNone.ms)
    if (got !== undefined)
      throw new ReplayError(
        `${where(t, step)}: expected nothing for ${step.expectNone.ms} ms, received ${JSON.stringify(got).slice(0, 600)}`,
      )
    return
  }
  if ('open' in step) {
    if (!arm.open) throw new ReplayError(`${where(t, step)}: ${arm.name} cannot open streams`)
    return arm.open(
      String(substitute(step.open.path, vars)),
      substitute(step.open.headers ?? {}, vars) as Record<string, string>,
    )
  }
  if ('close' in step) return arm.close?.()
  if ('closeInput' in step) {
    if (!arm.closeInput) throw new ReplayError(`${where(t, step)}: ${arm.name} has no input to close`)
    return arm.closeInput()
  }
  if ('expectExit' in step) {
    const wait = w.of(step.within)
    const code = await arm.exitCode?.(wait)
    if (code !== step.expectExit)
      throw new ReplayError(
        `${where(t, step)}: expected exit code ${step.expectExit}, got ${code === undefined ? `no exit within ${wait} ms` : code}`,
      )
  }
}

/** Run `t`'s steps on an arm someone else started (the conformance kit's targets); throws ReplayError on a mismatch. */
export async function replaySteps(
  t: Transcript,
  arm: Arm,
  armName: ArmName,
  vars: Vars,
  o: ReplayOptions = {},
): Promise<void> {
  const w = new Waits(o)
  for (const step of t.steps) {
    if ('arms' in step && step.arms && !step.arms.includes(armName)) continue
    if (o.ownRequirementOnly && 'requirement' in step && step.requirement && step.requirement !== t.header.id) continue
    if (!applies(step, vars)) continue
    await runStep(t, arm, step, vars, w)
  }
}

/** Replay `t` on `armName`; resolves with the captured values, throws ReplayError on failure. */
export async function replay(t: Transcript, armName: ArmName, stdio?: StdioTarget): Promise<Vars> {
  const arm = await startArm(t, armName, stdio)
  // `${token}` in a transcript is the server's master token (the kit fills in its target's).
  const vars: Vars = new Map(t.header.server?.token === undefined ? [] : [['token', t.header.server.token]])
  if (arm.cwd) vars.set('cwd', arm.cwd)
  try {
    await replaySteps(t, arm, armName, vars)
  } finally {
    await arm.dispose()
  }
  const v = arm.violations()
  if (v.length) {
    throw new ReplayError(
      `${t.file}: ${v.length} contract violation(s) on ${armName}:\n${v.map((x) => `  ${x.dir}: ${x.problem} — ${JSON.stringify(x.message).slice(0, 300)}`).join('\n')}`,
    )
  }
  return vars
}
