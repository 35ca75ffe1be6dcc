/**
 * The runner: every selected requirement on every targeted transport it binds to, one at a
 * time (fresh workspace and, for spawned targets, a fresh process each), then the
 * expected-failures list applied. A result fails on a step that did not hold or on any
 * contract violation the sniffers saw in either direction; a requirement that cannot apply to
 * ACP over the network is `na` there (run/applicable.ts).
 */
import { SseArm } from '../../harness/arms/sse.ts'
import { HttpArm } from '../../harness/arms/http.ts'
import { StdioArm } from '../../harness/arms/stdio.ts'
import { AcpNetArm } from '../../harness/arms/acp-net.ts'
import type { Arm } from '../../harness/arms/types.ts'
import { replaySteps } from '../../harness/replay.ts'
import { AcpSniffer, RpcSniffer } from '../../harness/sniffer.ts'
import type { Vars } from '../../harness/matcher.ts'
import type { Transcript } from '../../harness/transcript.ts'
import { AcpSeedAdapter } from '../adapters/acp-seed.ts'
import { AcpV1Adapter } from '../adapters/acp-v1.ts'
import { HttpAdapter, type HttpEndpoint } from '../adapters/http.ts'
import { RpcAdapter } from '../adapters/rpc.ts'
import type { Adapter, AdapterContext } from '../adapters/types.ts'
import type { CorpusEntry } from '../corpus/load.ts'
import { isAcpNet, type Level, type SurfaceId, type TransportId } from '../corpus/ids.ts'
import type { ResolvedProfile } from '../profiles/profile.ts'
import { ScenarioRun, StepFailure } from './abstract.ts'
import { startDouble, type RunningDouble } from './double.ts'
import type { PortRange } from './ports.ts'
import { applyExpected, type ExpectedFailure } from './expected.ts'
import { prepare, SkipError, type ExternalAcp, type Prepared } from './launch.ts'
import { notApplicable } from './applicable.ts'
import { describeViolation, toKitViolation, type KitViolation } from './violations.ts'

/** The default start-up grace: how much longer than --timeout a new target may take to answer first. */
export const STARTUP_GRACE_MS = 30_000

/** `na`: the requirement cannot apply on this transport (a stdio-only check on ACP over the network). */
export type Status = 'pass' | 'fail' | 'xfail' | 'stale' | 'skip' | 'na'

export interface Result {
  id: string
  title: string
  section: string
  level: Level
  surface: SurfaceId
  transport: TransportId
  file: string
  status: Status
  durationMs: number
  /** Why it failed or was skipped (first problem). */
  message?: string
  /** The corpus file line of the failing step. */
  line?: number
  violations: KitViolation[]
  /** The last frames and stderr lines, for a failure. */
  transcript?: string[]
  /** The expected-failures entry's reason and failure pattern (when one names this result). */
  expectedReason?: string
  expectedFailure?: string
  /** The implementation's name and version, as its handshake gave them. */
  agent?: { name: string; version: string }
}

export interface RunOptions {
  entries: readonly CorpusEntry[]
  profile: ResolvedProfile
  /** Transports the user targeted; requirements bound to others are not run. */
  transports: readonly TransportId[]
  externalHttp?: HttpEndpoint
  /** ACP endpoints someone else serves (`--acp-http`, `--acp-ws`). */
  externalAcp?: ExternalAcp
  expected?: readonly ExpectedFailure[]
  timeoutMs?: number
  /** Extra wait for a target's first answer (start-up), default 30 s. */
  startupGraceMs?: number
  /** Ports for the HTTP servers and the model double the kit starts (`--ports`). */
  ports?: PortRange
  onResult?: (r: Result) => void
}

function makeAdapter(t: TransportId, p: Prepared, ctx: AdapterContext): Adapter {
  if (t === 'http') return new HttpAdapter(p.http!, ctx)
  if (t === 'rpc') return new RpcAdapter(p.stdio!, ctx)
  if (t === 'acp-v1') return new AcpV1Adapter(t, p.stdio!, ctx)
  if (isAcpNet(t)) return new AcpV1Adapter(t, p.acp!, ctx)
  return new AcpSeedAdapter(t, p.stdio!, ctx)
}

function makeArm(
  t: Transcript,
  transport: TransportId,
  p: Prepared,
): { arm: Arm; name: 'stdio' | 'http-socket' | 'sse-socket' | 'acp-http' | 'acp-ws' } {
  if (transport === 'http') {
    const target = { baseUrl: p.http!.baseUrl, fetch: (req: Request) => fetch(req), close: async () => {} }
    // A transcript of the sse surface, or an http one that runs only on the SSE arms (it opens streams), needs the SSE arm.
    const sse =
      t.header.surface === 'sse' || (t.header.arms?.length && t.header.arms.every((a) => a.startsWith('sse-')))
    return sse
      ? { arm: new SseArm('sse-socket', target), name: 'sse-socket' }
      : { arm: new HttpArm('http-socket', target), name: 'http-socket' }
  }
  if (isAcpNet(transport)) return { arm: new AcpNetArm(transport, p.acp!, new AcpSniffer()), name: transport }
  const sniffer = transport === 'rpc' ? new RpcSniffer() : new AcpSniffer()
  return { arm: new StdioArm(p.stdio!, [], sniffer), name: 'stdio' }
}

async function runEntry(
  e: CorpusEntry,
  transport: TransportId,
  o: RunOptions,
  double: RunningDouble | undefined,
): Promise<Omit<Result, 'durationMs'>> {
  const base = {
    id: e.id,
    title: e.title,
    section: e.section,
    level: e.level,
    surface: e.surface,
    transport,
    file: e.file,
    violations: [] as KitViolation[],
  }
  const declared = new Set(o.profile.profile.capabilities)
  const workspaceFiles =
    e.body.kind === 'scenario'
      ? e.body.scenario.header.workspace
      : (e.body.transcript.header.workspace?.files ?? e.body.transcript.header.server?.workspace ?? {})
  const na = notApplicable(e, transport)
  if (na) return { ...base, status: 'na', message: na }
  let prepared: Prepared
  try {
    if (e.body.kind === 'transcript') {
      const missing = e.requires.filter((c) => !declared.has(c))
      if (missing.length)
        return { ...base, status: 'skip', message: `needs ${missing.join(', ')}, which the target does not declare` }
    }
    prepared = await prepare({
      profile: o.profile,
      transport,
      workspaceFiles,
      config: e.config,
      double,
      externalHttp: o.externalHttp,
      externalAcp: o.externalAcp,
      ports: o.ports,
      readyMs: (o.timeoutMs ?? 10_000) + (o.startupGraceMs ?? STARTUP_GRACE_MS),
    })
  } catch (err) {
    if (err instanceof SkipError) return { ...base, status: 'skip', message: err.message }
    return { ...base, status: 'fail', message: `could not start the target: ${(err as Error).message}` }
  }
  const clientFs = e.body.kind === 'scenario' && e.body.scenario.header.clientFs
  const ctx: AdapterContext = {
    workspace: prepared.workspace,
    profile: o.profile,
    timeoutMs: o.timeoutMs ?? 10_000,
    startupGraceMs: o.startupGraceMs ?? STARTUP_GRACE_MS,
    doubleModel: double?.model,
    clientFs,
  }
  let violations: KitViolation[] = []
  let transcript: string[] = []
  let agent: Result['agent']
  /** Why an ACP network connection ended early (a refused token, a dropped socket), in the SDK's words. */
  let ended: string | undefined
  try {
    if (e.body.kind === 'scenario') {
      const adapter = makeAdapter(transport, prepared, ctx)
      try {
        const run = new ScenarioRun(adapter, ctx)
        await run.open('main')
        const have = new Set([...declared, ...adapter.capabilities()])
        const missing = e.requires.filter((c) => !have.has(c))
        if (missing.length)
          return {
            ...base,
            status: 'skip',
            message: `needs ${missing.join(', ')}, which the target neither declares nor advertises`,
          }
        await run.run(e.body.scenario)
      } finally {
        transcript = adapter.transcript()
        agent = adapter.agent?.()
        await adapter.dispose()
        violations = adapter.violations()
      }
    } else {
      const t = e.body.transcript
      const { arm, name } = makeArm(t, transport, prepared)
      const vars: Vars = new Map(prepared.http?.token ? [['token', prepared.http.token]] : [])
      // `${cwd}` in a transcript's sends is the peer's working directory (the scenario's workspace).
      if (arm instanceof StdioArm || arm instanceof AcpNetArm) vars.set('cwd', arm.cwd)
      if (t.steps.some((s) => JSON.stringify(s).includes('${token}')) && !vars.has('token')) {
        await arm.dispose()
        return {
          ...base,
          status: 'skip',
          message: "needs the server's master token (--token, or the profile's targets.http.token)",
        }
      }
      try {
        await replaySteps(t, arm, name, vars, {
          waitMs: ctx.timeoutMs,
          startupGraceMs: ctx.startupGraceMs,
          ownRequirementOnly: true,
        })
      } finally {
        await arm.dispose()
        violations = arm.violations().map((v) => toKitViolation(transport, v))
        if (arm instanceof StdioArm || arm instanceof AcpNetArm) {
          agent = arm.agentInfo
          transcript = arm.diagnostics()
        }
        if (arm instanceof AcpNetArm) ended = arm.error
      }
    }
  } catch (err) {
    // A transcript's ReplayError names `<file>:<line>:`; any other number in a message (a peer's stderr) is not a line.
    const line =
      err instanceof StepFailure
        ? err.line
        : new RegExp(`${e.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):`).exec((err as Error).message)?.[1]
    // fetch's own message ("fetch failed") says nothing; its cause names the socket error.
    const cause = (err as { cause?: { message?: string } }).cause?.message
    const message =
      (err as Error).message.replace(`${e.file}:`, 'line ') +
      (cause ? ` (${cause})` : '') +
      (ended ? ` (the ${transport} connection ended: ${ended})` : '')
    return {
      ...base,
      status: 'fail',
      message,
      line: line === undefined ? undefined : Number(line),
      violations,
      transcript,
      agent,
    }
  } finally {
    await prepared.close()
  }
  if (violations.length)
    return {
      ...base,
      status: 'fail',
      message: `contract violation: ${describeViolation(violations[0]!)}${violations.length > 1 ? ` (+${violations.length - 1} more)` : ''}`,
      violations,
      transcript,
      agent,
    }
  return { ...base, status: 'pass', violations, agent }
}

/** Every (requirement, transport) pair the run covers, in corpus order. */
export function plan(
  entries: readonly CorpusEntry[],
  transports: readonly TransportId[],
): { entry: CorpusEntry; transport: TransportId }[] {
  return entries.flatMap((entry) =>
    entry.transports.filter((t) => transports.includes(t)).map((transport) => ({ entry, transport })),
  )
}

export async function runCorpus(o: RunOptions): Promise<Result[]> {
  const double = o.profile.profile.model?.double
    ? await startDouble(o.profile.profile.model.apiKey, o.ports)
    : undefined
  const results: Result[] = []
  try {
    for (const { entry, transport } of plan(o.entries, o.transports)) {
      const started = Date.now()
      const r: Result = { ...(await runEntry(entry, transport, o, double)), durationMs: Date.now() - started }
      applyExpected(r, o.expected ?? [])
      results.push(r)
      o.onResult?.(r)
    }
  } finally {
    await double?.close()
  }
  return results
}
