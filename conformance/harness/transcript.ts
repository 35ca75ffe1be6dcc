/**
 * The transcript format: one scenario per JSONL file. Line 1 is a header, every other line one
 * step. Steps send messages, expect partial matches (see matcher.ts), assert that nothing
 * arrives for a while, or send raw bytes for framing cases.
 *
 *   {"transcript":1,"title":"…","surface":"acp","launch":["otter","serve","--acp"]}
 *   {"send":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}}
 *   {"expect":{"id":1,"result":{"protocolVersion":1}}}
 *   {"sendRaw":"{\"jsonrpc\":\"2.0\",\"id\":2,\r\n","chunks":[1,1]}
 *   {"expectNone":{"ms":200}}
 *   {"sendRaw":{"prefix":"{\"type\":\"prompt\",\"message\":\"","fill":"x","bytes":1048600,"suffix":"\"}\n"}}
 *
 * HTTP steps: `send` is a request `{method, path, headers?, body?, bodyText?}` and `expect` a
 * response `{status, headers?, body?, bodyText?}`. SSE steps: `open` a stream
 * `{path, headers?}`, then `expect` records `{id?, event?, data?}`, `expectNone`, `close`.
 * Stdio steps may end with `closeInput` and `expectExit` (the exit code).
 * `expectUnordered` takes N patterns that the next N items match in any order.
 * A stdio header may ask for a `workspace` (a temp working directory holding `files`).
 * Any step may carry `"arms": [...]` to run only on those arms, a `"note"`, a `"when"` (run only
 * when captured values match patterns) and a `"requirement"` (it checks another requirement).
 */
import { readFileSync } from 'node:fs'
import * as z from 'zod'

export const SURFACES = ['http', 'sse', 'acp', 'rpc'] as const
/** `acp-http` and `acp-ws` (ACP v1 over the network, harness/arms/acp-net.ts) run in the conformance kit, against a URL. */
export const ARMS = [
  'http-inprocess',
  'http-socket',
  'sse-inprocess',
  'sse-socket',
  'stdio',
  'acp-http',
  'acp-ws',
] as const
export type Surface = (typeof SURFACES)[number]
export type ArmName = (typeof ARMS)[number]

/** Arms a surface runs on when a header names none. */
export const DEFAULT_ARMS: Record<Surface, ArmName[]> = {
  http: ['http-inprocess', 'http-socket'],
  sse: ['sse-inprocess', 'sse-socket'],
  acp: ['stdio'],
  rpc: ['stdio'],
}

const Header = z
  .object({
    transcript: z.literal(1),
    title: z.string().min(1),
    surface: z.enum(SURFACES),
    arms: z.array(z.enum(ARMS)).optional(),
    /** stdio: CLI arguments after `chimera`; http/sse: server options. */
    launch: z.array(z.string()).optional(),
    /** http/sse: the server under test (see harness/targets.ts ServerOptions). */
    server: z
      .object({
        token: z.string().optional(),
        cors: z.array(z.string()).optional(),
        ttlMs: z.number().int().positive().optional(),
        approval: z.enum(['allow', 'deny', 'ask', 'auto', 'read-only']).optional(),
        workspace: z.record(z.string(), z.string()).optional(),
        sse: z
          .object({
            retryMs: z.number().int().nonnegative(),
            heartbeatMs: z.number().int().positive(),
            bufferBytes: z.number().int().positive(),
            stallMs: z.number().int().positive(),
          })
          .partial()
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    env: z.record(z.string(), z.string()).optional(),
    /** stdio: a temporary working directory for the child, with these files (path → content). */
    workspace: z
      .object({ files: z.record(z.string(), z.string()).default({}) })
      .strict()
      .optional(),
    specRefs: z.array(z.string()).optional(),
    // The conformance kit's corpus fields (docs/decisions/0100): the stable requirement id, the
    // document section it comes from, its level, the kit transports it binds to, the named
    // configuration a third-party target must be started with, and capabilities it needs.
    id: z
      .string()
      .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)+$/)
      .optional(),
    section: z.string().optional(),
    level: z.enum(['MUST', 'SHOULD', 'MAY']).optional(),
    transports: z.array(z.enum(['acp-v1', 'acp-otter', 'acp-ferret', 'http', 'rpc'])).optional(),
    config: z.record(z.string(), z.string()).optional(),
    requires: z.array(z.string()).optional(),
  })
  .strict()

const common = {
  arms: z.array(z.enum(ARMS)).optional(),
  note: z.string().optional(),
  line: z.number().optional(),
  /**
   * Run the step only when captured values match: `{"caps": {"auth": {"logout": {"$absent": true}}}}`
   * (name → pattern, see matcher.ts); captures in the patterns are kept. For what the spec makes
   * depend on what the peer advertised.
   */
  when: z.record(z.string(), z.unknown()).optional(),
  /**
   * The step checks another requirement than the transcript's own (e.g. the exit when stdin
   * closes, `acp.stdio.exit-on-end-of-input`): the conformance kit leaves it out of this one.
   */
  requirement: z.string().optional(),
}
const Step = z.union([
  z.object({ send: z.unknown(), invalid: z.boolean().optional(), ...common }).strict(),
  z
    .object({
      sendRaw: z.union([
        z.string(),
        z.object({ base64: z.string() }).strict(),
        /** `prefix`, then `fill` repeated to `bytes` bytes in all, then `suffix` (long-line cases). */
        z
          .object({
            prefix: z.string().default(''),
            fill: z.string().min(1),
            bytes: z.number().int().positive(),
            suffix: z.string().default(''),
          })
          .strict(),
      ]),
      chunks: z.array(z.number().int().positive()).optional(),
      ...common,
    })
    .strict(),
  /** `skipping: true` discards items that do not match until one does (streamed chunks). */
  z
    .object({
      expect: z.unknown(),
      within: z.number().int().positive().optional(),
      skipping: z.boolean().optional(),
      ...common,
    })
    .strict(),
  z.object({ expectNone: z.object({ ms: z.number().int().positive() }).strict(), ...common }).strict(),
  /** The next N items match these N patterns in some order (for replies that may interleave). */
  z
    .object({ expectUnordered: z.array(z.unknown()).min(1), within: z.number().int().positive().optional(), ...common })
    .strict(),
  z
    .object({
      open: z.object({ path: z.string(), headers: z.record(z.string(), z.string()).optional() }).strict(),
      ...common,
    })
    .strict(),
  z.object({ close: z.literal(true), ...common }).strict(),
  z.object({ closeInput: z.literal(true), ...common }).strict(),
  z.object({ expectExit: z.number().int(), within: z.number().int().positive().optional(), ...common }).strict(),
  z.object({ note: z.string(), line: z.number().optional() }).strict(),
])

export type TranscriptHeader = z.infer<typeof Header>
export type Step = z.infer<typeof Step>
export interface Transcript {
  file: string
  header: TranscriptHeader
  steps: Step[]
}

/** Parse transcript text; errors name the file and line. */
export function parseTranscript(text: string, file = '<inline>'): Transcript {
  const lines = text.split('\n')
  const entries: { value: unknown; line: number }[] = []
  lines.forEach((raw, i) => {
    if (raw.trim() === '' || raw.trimStart().startsWith('//')) return
    try {
      entries.push({ value: JSON.parse(raw), line: i + 1 })
    } catch (e) {
      throw new Error(`${file}:${i + 1}: not JSON: ${(e as Error).message}`)
    }
  })
  if (!entries.length) throw new Error(`${file}: empty transcript`)
  const h = Header.safeParse(entries[0]!.value)
  if (!h.success) throw new Error(`${file}:${entries[0]!.line}: bad header: ${h.error.message}`)
  const steps = entries.slice(1).map(({ value, line }) => {
    const s = Step.safeParse(value)
    if (!s.success) throw new Error(`${file}:${line}: bad step: ${s.error.message}`)
    return { ...s.data, line } as Step
  })
  return { file, header: h.data, steps }
}

export function loadTranscript(path: string): Transcript {
  return parseTranscript(readFileSync(path, 'utf8'), path)
}

/** The arms a transcript runs on. */
export const armsOf = (t: Transcript): ArmName[] => t.header.arms ?? DEFAULT_ARMS[t.header.surface]
