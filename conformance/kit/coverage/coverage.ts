/**
 * Which spec items the corpus touches, read statically from each requirement: the frames a
 * raw transcript sends and expects (methods, update kinds, error codes, routes, SSE events,
 * command and message types), what each abstract step means on each transport it binds to,
 * and a scenario's own `covers` list. The report lists every item nothing touches.
 */
import { findOperation } from '../../harness/sniffer.ts'
import { negotiate } from '../../../server/acp/dialect.ts'
import type { Transcript } from '../../harness/transcript.ts'
import type { CorpusEntry } from '../corpus/load.ts'
import { isAcpNet, type TransportId } from '../corpus/ids.ts'
import type { AbstractStep } from '../corpus/scenario.ts'
import { FAMILIES, RPC_TYPE_TO_MESSAGE, specItems, type Family } from './items.ts'
import { UNREACHABLE } from './unreachable.ts'

type Touch = Set<string>
type AcpDialect = 'acp.v1' | 'acp.seed'
const add = (t: Touch, family: Family, name: string | number): void => void t.add(`${family} ${name}`)
/** ACP v1 on stdio and over the network (acp-http, acp-ws) share the v1 items. */
const v1Wire = (tr: TransportId): TransportId => (isAcpNet(tr) ? 'acp-v1' : tr)
const dialect = (tr: TransportId): AcpDialect => (v1Wire(tr) === 'acp-v1' ? 'acp.v1' : 'acp.seed')

/** Walk every JSON value under `v`, calling `f` on each object. */
function objects(v: unknown, f: (o: Record<string, any>) => void): void {
  if (Array.isArray(v)) v.forEach((x) => objects(x, f))
  else if (v && typeof v === 'object') {
    f(v as Record<string, any>)
    Object.values(v).forEach((x) => objects(x, f))
  }
}

/** The ACP dialect a sent `initialize` selects: the agent's own negotiation rule (decision 0003). */
function initializeDialect(frame: unknown): AcpDialect | undefined {
  const f = frame as { method?: unknown; params?: unknown } | null
  if (!f || typeof f !== 'object' || f.method !== 'initialize') return undefined
  return negotiate(f.params ?? {}) === 'acp-v1' ? 'acp.v1' : 'acp.seed'
}

/** ACP items of one frame, in the dialect the connection speaks when it is sent or received. */
function fromAcpFrame(frame: unknown, d: AcpDialect, t: Touch): void {
  objects(frame, (o) => {
    if (typeof o.method === 'string') add(t, `${d} method`, o.method)
    if (typeof o.sessionUpdate === 'string') add(t, `${d} update`, o.sessionUpdate)
    if (o.error && typeof o.error === 'object' && typeof o.error.code === 'number') add(t, `${d} error`, o.error.code)
  })
  // A ferret update is flat: its `kind` sits in the params of session/update (on v1,
  // `_ferret/session/update` is a method of its own, not a v1 update kind).
  const f = frame as { method?: unknown; params?: { kind?: unknown } } | null
  if (d === 'acp.seed' && f?.method === 'session/update' && typeof f.params?.kind === 'string')
    add(t, 'acp.seed update', f.params.kind)
}

/**
 * `channel`: the SSE stream the frames arrived on (the last one a transcript opened), for records
 * that name no path. `d`: the ACP dialect in force when the frames start; the one in force after
 * them is returned, so a transcript's steps carry it from one to the next.
 */
function fromFrames(
  frames: unknown[],
  tr: TransportId,
  surface: string,
  t: Touch,
  channel = 'sessionsEvents',
  d: AcpDialect = dialect(tr),
): AcpDialect {
  // Before any initialize, a frame is read in the transport's own dialect; a sent initialize
  // (re)negotiates, so a v1 transcript run on the ferret agent counts v1 items.
  for (const frame of frames) {
    if (tr.startsWith('acp')) {
      d = initializeDialect(frame) ?? d
      fromAcpFrame(frame, d, t)
    }
    objects(frame, (o) => {
      if (tr === 'rpc' && typeof o.type === 'string') {
        if (
          'message' in o ||
          ['cancel', 'get_state', 'compact', 'set_model', 'permission_reply', 'steer', 'prompt'].includes(o.type)
        )
          add(t, 'rpc command', o.type)
        if (RPC_TYPE_TO_MESSAGE[o.type]) add(t, 'rpc message', RPC_TYPE_TO_MESSAGE[o.type]!)
      }
      if (tr === 'http') {
        if (typeof o.path === 'string' && (typeof o.method === 'string' || surface === 'sse')) {
          const op = findOperation(
            String(o.method ?? 'GET').toUpperCase(),
            new URL(o.path.replace(/\$\{[^}]*\}/g, 'x'), 'http://x').pathname,
          )
          if (op) add(t, 'http route', op.operationId)
        }
        if (typeof o.error === 'string') add(t, 'http error', o.error)
        if (typeof o.event === 'string')
          add(t, 'sse event', `${typeof o.path === 'string' ? channelOf(o.path) : channel}.${o.event}`)
        if (typeof o.type === 'string') add(t, 'event type', o.type)
      }
    })
  }
  return d
}

const channelOf = (path: string): string => (path.startsWith('/session/') ? 'sessionEvents' : 'sessionsEvents')

function fromTranscript(tx: Transcript, tr: TransportId, t: Touch): void {
  // SSE records name no path: they belong to the stream the transcript opened last.
  let channel = 'sessionsEvents'
  let d = dialect(tr)
  for (const s of tx.steps) {
    const frames: unknown[] = []
    if ('send' in s) frames.push(s.send)
    if ('expect' in s) frames.push(s.expect)
    if ('expectUnordered' in s) frames.push(...s.expectUnordered)
    if ('open' in s) {
      frames.push({ ...s.open, method: 'GET' })
      channel = channelOf(s.open.path)
    }
    if ('sendRaw' in s && typeof s.sendRaw === 'string')
      for (const l of s.sendRaw.split('\n')) {
        try {
          frames.push(JSON.parse(l))
        } catch {
          // not JSON: a framing case
        }
      }
    d = fromFrames(frames, tr, tx.header.surface, t, channel, d)
  }
}

/** What an abstract step exercises on a transport. */
const STEP_ITEMS: Record<string, Partial<Record<TransportId | 'acp-seed', string[]>>> = {
  open: {
    'acp-v1': ['acp.v1 method initialize', 'acp.v1 method session/new'],
    'acp-seed': ['acp.seed method initialize', 'acp.seed method session/new'],
    http: ['http route session.create', 'http route session.streamEvents', 'sse event sessionEvents.loop_event'],
  },
  prompt: {
    'acp-v1': ['acp.v1 method session/prompt', 'acp.v1 method session/update'],
    'acp-seed': ['acp.seed method session/message', 'acp.seed method session/update'],
    http: ['http route session.sendMessage', 'event type user_message', 'event type turn_start'],
    rpc: ['rpc command prompt', 'rpc message RpcResponse'],
  },
  text: {
    'acp-v1': ['acp.v1 update agent_message_chunk'],
    'acp-seed': ['acp.seed update agent_message_chunk'],
    http: ['event type text_delta'],
    rpc: ['rpc message MessageEvent'],
  },
  thought: {
    'acp-v1': ['acp.v1 update agent_thought_chunk'],
    http: ['event type reasoning'],
    rpc: ['rpc message ReasoningEvent'],
  },
  toolCall: {
    'acp-v1': ['acp.v1 update tool_call'],
    'acp-otter': ['acp.seed update tool_call'],
    'acp-ferret': ['acp.seed update tool_call_start'],
    http: ['event type tool_call'],
    rpc: ['rpc message ToolExecutionEvent'],
  },
  toolResult: {
    'acp-v1': ['acp.v1 update tool_call_update'],
    'acp-otter': ['acp.seed update tool_result'],
    'acp-ferret': ['acp.seed update tool_call_end'],
    http: ['event type tool_result'],
    rpc: ['rpc message ToolExecutionEvent'],
  },
  permission: {
    'acp-v1': ['acp.v1 method session/request_permission'],
    'acp-seed': ['acp.seed update permission_request'],
    http: ['event type permission_request'],
    rpc: ['rpc message PermissionRequestEvent'],
  },
  answer: {
    'acp-seed': ['acp.seed method permission/respond'],
    http: ['http route tool.approve', 'event type permission_reply'],
    rpc: ['rpc command permission_reply'],
  },
  cancel: {
    'acp-v1': ['acp.v1 method session/cancel'],
    'acp-seed': ['acp.seed method session/cancel'],
    http: ['http route session.cancel'],
    rpc: ['rpc command cancel'],
  },
  cancelled: { http: ['event type cancelled'] },
  completed: { http: ['event type agent_result', 'sse event sessionEvents.result'] },
  failed: { http: ['event type error'], rpc: ['rpc message ErrorEvent'] },
  // The HTTP adapter cannot steer (no route): a steer scenario bound to http is skipped there.
  steer: { 'acp-v1': ['acp.v1 method _session/steering'], rpc: ['rpc command steer'] },
  'fs/read_text_file': { 'acp-v1': ['acp.v1 method fs/read_text_file'] },
  'fs/write_text_file': { 'acp-v1': ['acp.v1 method fs/write_text_file'] },
  resume: {
    'acp-v1': ['acp.v1 method session/load'],
    'acp-seed': ['acp.seed method session/resume'],
    http: ['http route session.streamEvents'],
  },
}

function stepKey(s: AbstractStep): string[] {
  if ('prompt' in s) return ['prompt']
  if ('expectText' in s) return ['text']
  if ('expectThought' in s) return ['thought']
  if ('expectToolCall' in s) return ['toolCall']
  if ('expectToolResult' in s) return ['toolResult']
  if ('expectPermission' in s) return ['permission']
  if ('answerPermission' in s) return ['answer']
  if ('cancel' in s) return ['cancel']
  if ('steer' in s) return ['steer']
  if ('expectClientRequest' in s) return [s.expectClientRequest.method]
  if ('resume' in s || 'expectNoEventLost' in s) return ['resume']
  if ('expectTurnEnd' in s) return [s.expectTurnEnd]
  return []
}

export function touches(e: CorpusEntry): Touch {
  const t: Touch = new Set()
  for (const tr of e.transports) {
    if (e.body.kind === 'transcript') {
      fromTranscript(e.body.transcript, tr, t)
      continue
    }
    const seedish = tr === 'acp-otter' || tr === 'acp-ferret' ? 'acp-seed' : undefined
    for (const key of ['open', ...e.body.scenario.steps.flatMap(stepKey)]) {
      const m = STEP_ITEMS[key] ?? {}
      for (const item of [...(m[v1Wire(tr)] ?? []), ...(seedish ? (m[seedish] ?? []) : [])]) t.add(item)
    }
    for (const c of e.body.scenario.header.covers) t.add(c)
  }
  return t
}

export interface CoverageReport {
  /** `untouched` excludes the items no black-box client can reach (`unreachable`, with the reason). */
  families: {
    family: Family
    total: number
    covered: number
    untouched: string[]
    unreachable: { name: string; reason: string }[]
  }[]
}

export function coverage(entries: readonly CorpusEntry[]): CoverageReport {
  const touched = new Set<string>()
  for (const e of entries) for (const x of touches(e)) touched.add(x)
  const items = specItems()
  return {
    families: FAMILIES.map((family) => {
      const all = items.get(family) ?? []
      const missed = all.filter((n) => !touched.has(`${family} ${n}`))
      const reasonOf = (n: string): string | undefined => UNREACHABLE[`${family} ${n}`]
      return {
        family,
        total: all.length,
        covered: all.length - missed.length,
        untouched: missed.filter((n) => reasonOf(n) === undefined),
        unreachable: missed.flatMap((n) => (reasonOf(n) === undefined ? [] : [{ name: n, reason: reasonOf(n)! }])),
      }
    }),
  }
}

export function coverageText(r: CoverageReport): string {
  const total = r.families.reduce((a, f) => a + f.total, 0)
  const covered = r.families.reduce((a, f) => a + f.covered, 0)
  const unreachable = r.families.flatMap((f) => f.unreachable.map((u) => ({ family: f.family, ...u })))
  const lines = [
    `spec coverage: ${covered}/${total} items touched by the selected requirements${unreachable.length ? ` (${unreachable.length} more unreachable by a black-box client, listed below)` : ''}`,
  ]
  for (const f of r.families) {
    const rest = f.total - f.covered - f.untouched.length
    lines.push(
      `  ${f.family.padEnd(16)} ${String(f.covered).padStart(3)}/${String(f.total).padEnd(3)}${rest ? ` (${rest} unreachable)` : ''}${f.untouched.length ? ` untouched: ${f.untouched.join(', ')}` : ''}`,
    )
  }
  if (unreachable.length) {
    lines.push('unreachable by a black-box client (no valid request or setup provokes them; not counted as covered):')
    for (const u of unreachable) lines.push(`  ${u.family} ${u.name}: ${u.reason}`)
  }
  return lines.join('\n')
}
