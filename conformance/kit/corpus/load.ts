/**
 * The requirement corpus: every raw transcript (conformance/transcripts, one surface, raw
 * frames) and every abstract scenario (conformance/scenarios, written once, bound to many
 * transports), each under a stable requirement id with its section, level and transports.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { parseTranscript, type Transcript } from '../../harness/transcript.ts'
import { ACP_NET_TRANSPORTS, surfaceOf, type Level, type SurfaceId, type TransportId } from './ids.ts'
import { parseScenario, type Scenario } from './scenario.ts'

export interface CorpusEntry {
  id: string
  title: string
  section: string
  level: Level
  transports: TransportId[]
  surface: SurfaceId
  requires: string[]
  config: Record<string, string>
  file: string
  /** False when the id was derived from the file name (a transcript not yet given one). */
  explicitId: boolean
  body: { kind: 'scenario'; scenario: Scenario } | { kind: 'transcript'; transcript: Transcript }
}

/**
 * ACP v1 is one protocol on three wires: a requirement bound to `acp-v1` (stdio) binds to
 * `acp-http` and `acp-ws` too, right after it (one that cannot apply there is reported not
 * applicable by the runner, never silently left out).
 */
export function withAcpNet(transports: readonly TransportId[]): TransportId[] {
  if (!transports.includes('acp-v1')) return [...transports]
  const rest = transports.filter((t) => !(ACP_NET_TRANSPORTS as readonly string[]).includes(t))
  const at = rest.indexOf('acp-v1') + 1
  return [...rest.slice(0, at), ...ACP_NET_TRANSPORTS, ...rest.slice(at)]
}

/** Transports a raw transcript binds to when its header names none. */
function transcriptTransports(t: Transcript): TransportId[] {
  if (t.header.transports) return t.header.transports
  if (t.header.surface === 'http' || t.header.surface === 'sse') return ['http']
  if (t.header.surface === 'rpc') return ['rpc']
  if (t.header.launch?.[0] === 'ferret') return ['acp-ferret']
  const init = t.steps.find((s) => 'send' in s && (s.send as { method?: string })?.method === 'initialize') as
    { send: { params?: { protocolVersion?: unknown } } } | undefined
  return init?.send.params?.protocolVersion === 1 ? ['acp-v1'] : ['acp-otter']
}

/**
 * An HTTP transcript's `server.token` says whether the server runs with a master token: the
 * kit asks the target for `auth=token` or `auth=none` (a profile says how; a server given by
 * `--http` matches when `--token` was or was not given).
 */
function transcriptConfig(t: Transcript): Record<string, string> {
  const config = { ...(t.header.config ?? {}) }
  if ((t.header.surface === 'http' || t.header.surface === 'sse') && config.auth === undefined)
    config.auth = t.header.server?.token === undefined ? 'none' : 'token'
  return config
}

function fromTranscript(t: Transcript, base: string): CorpusEntry {
  const derived = `transcript.${t.header.surface}.${relative(base, t.file)
    .replace(/\.jsonl$/, '')
    .replace(/[^a-z0-9]+/gi, '-')
    .toLowerCase()}`
  const id = t.header.id ?? derived
  return {
    id,
    title: t.header.title,
    section: t.header.section ?? t.header.specRefs?.join('; ') ?? '',
    level: t.header.level ?? 'MUST',
    transports: withAcpNet(transcriptTransports(t)),
    surface: t.header.surface === 'sse' ? 'sse' : surfaceOf(id),
    requires: t.header.requires ?? [],
    config: transcriptConfig(t),
    file: t.file,
    explicitId: t.header.id !== undefined,
    body: { kind: 'transcript', transcript: t },
  }
}

function fromScenario(s: Scenario): CorpusEntry {
  const h = s.header
  return {
    id: h.id,
    title: h.title,
    section: h.section,
    level: h.level,
    transports: withAcpNet(h.transports),
    surface: surfaceOf(h.id),
    requires: h.requires,
    config: h.config,
    file: s.file,
    explicitId: true,
    body: { kind: 'scenario', scenario: s },
  }
}

/** Parse one corpus file: the header decides whether it is a transcript or a scenario. */
export function parseCorpusFile(text: string, file: string, base: string): CorpusEntry {
  const first = text.split('\n').find((l) => l.trim() !== '' && !l.trimStart().startsWith('//')) ?? ''
  let head: Record<string, unknown> = {}
  try {
    head = JSON.parse(first) as Record<string, unknown>
  } catch {
    // parseTranscript reports the line
  }
  return 'scenario' in head
    ? fromScenario(parseScenario(text, file))
    : fromTranscript(parseTranscript(text, file), base)
}

/** Load every `*.jsonl` under the given directories; ids must be unique across them. */
export function loadCorpus(dirs: readonly string[]): CorpusEntry[] {
  const out: CorpusEntry[] = []
  for (const dir of dirs) {
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).sort()
    for (const f of files) out.push(parseCorpusFile(readFileSync(join(dir, f), 'utf8'), join(dir, f), dir))
  }
  const seen = new Map<string, string>()
  for (const e of out) {
    const prev = seen.get(e.id)
    if (prev) throw new Error(`requirement id ${e.id} is used twice: ${prev} and ${e.file}`)
    seen.set(e.id, e.file)
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
