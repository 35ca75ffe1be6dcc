/**
 * The abstract scenario format (docs/decisions/0100): one scenario per JSONL file, written once
 * and run on every transport it binds to. Line 1 is the header, every further line one step in
 * the abstract vocabulary below; per-transport adapters (conformance/kit/adapters/) turn each
 * step into that wire's frames and each wire's frames back into observations.
 *
 *   {"scenario":1,"id":"core.cancel.mid-turn","title":"…","section":"docs/zed.md Cancellation",
 *    "transports":["acp-v1","acp-otter","acp-ferret","http","rpc"]}
 *   {"prompt":["!say partial answer",{"sleep":20000},"!say never"]}
 *   {"expectText":"partial answer"}
 *   {"cancel":true}
 *   {"expectTurnEnd":"cancelled"}
 *
 * Prompt lines are the model double's directive language (docs/providers.md); `{"call":"read",…}`
 * names an abstract action that the target profile turns into that implementation's tool name
 * and arguments, so the same scenario drives any agent.
 */
import * as z from 'zod'
import { ID_PATTERN, LEVELS, TRANSPORTS } from './ids.ts'
import { formatIssues } from '../../../client/wire/issues.ts'

export const ACTIONS = ['read', 'write', 'run'] as const
export type Action = (typeof ACTIONS)[number]
export const DECISIONS = ['allow', 'deny', 'always', 'never'] as const
export type Decision = (typeof DECISIONS)[number]
export const OUTCOMES = ['completed', 'cancelled', 'failed'] as const
export const CLIENT_FS_METHODS = ['fs/read_text_file', 'fs/write_text_file'] as const
export type Outcome = (typeof OUTCOMES)[number]

/** One line of a prompt: a directive line as text, or a structured directive. */
const PromptLine = z.union([
  z.string(),
  z.object({ say: z.string() }).strict(),
  z.object({ think: z.string() }).strict(),
  z.object({ sleep: z.number().int().nonnegative() }).strict(),
  z.object({ fail: z.string() }).strict(),
  /** An abstract tool call: the profile maps `call` to a tool and the other keys to its arguments. */
  z
    .object({
      call: z.enum(ACTIONS),
      path: z.string().optional(),
      content: z.string().optional(),
      command: z.string().optional(),
    })
    .strict(),
])
export type PromptLine = z.infer<typeof PromptLine>

/** A text pattern: exact text, or any matcher pattern (`{"$regex": …}`). */
const TextPattern = z.union([z.string(), z.record(z.string(), z.unknown())])

export const ScenarioHeader = z
  .object({
    scenario: z.literal(1),
    id: z.string().regex(ID_PATTERN),
    title: z.string().min(1),
    /** Where the requirement comes from: document and section. */
    section: z.string().min(1),
    level: z.enum(LEVELS).default('MUST'),
    transports: z.array(z.enum(TRANSPORTS)).min(1),
    /** Capabilities the target must have (declared by its profile or advertised at handshake); otherwise skipped. */
    requires: z.array(z.string()).default([]),
    /** Named configuration the target must be started with (`approval: ask`); the profile says how. */
    config: z.record(z.string(), z.string()).default({}),
    /** Files of the scenario's working directory (path → content). */
    workspace: z.record(z.string(), z.string()).default({}),
    /**
     * The kit, as the ACP v1 client, advertises `fs.readTextFile`/`writeTextFile` and answers the
     * agent's `fs/*` requests from the scenario's workspace (ACP v1 only).
     */
    clientFs: z.boolean().default(false),
    /** Spec items (coverage report) this scenario exercises beyond what its frames show. */
    covers: z.array(z.string()).default([]),
    note: z.string().optional(),
  })
  .strict()
export type ScenarioHeader = z.infer<typeof ScenarioHeader>

const on = {
  session: z.string().optional(),
  note: z.string().optional(),
  line: z.number().optional(),
  only: z.array(z.enum(TRANSPORTS)).optional(),
}
const within = z.number().int().positive().optional()

export const AbstractStep = z.union([
  /** Open another session (the first prompt opens the default one). */
  z.object({ openSession: z.literal(true), ...on }).strict(),
  z.object({ prompt: z.union([z.string(), z.array(PromptLine).min(1)]), ...on }).strict(),
  /** The current turn's assistant text, concatenated, matches (waits for it). */
  z.object({ expectText: TextPattern, within, ...on }).strict(),
  z.object({ expectThought: TextPattern, within, ...on }).strict(),
  z
    .object({
      expectToolCall: z
        .object({ action: z.enum(ACTIONS), args: z.record(z.string(), z.unknown()).optional() })
        .strict(),
      as: z.string().optional(),
      within,
      ...on,
    })
    .strict(),
  z
    .object({
      expectToolResult: z
        .object({ call: z.string().optional(), ok: z.boolean(), output: TextPattern.optional() })
        .strict(),
      within,
      ...on,
    })
    .strict(),
  z
    .object({
      expectPermission: z.object({ action: z.enum(ACTIONS) }).strict(),
      as: z.string().optional(),
      within,
      ...on,
    })
    .strict(),
  z
    .object({
      answerPermission: z.object({ request: z.string().optional(), decision: z.enum(DECISIONS) }).strict(),
      ...on,
    })
    .strict(),
  z.object({ cancel: z.literal(true), ...on }).strict(),
  /** The agent asked the client (the kit) for a workspace file (`clientFs` scenarios); `path` is workspace-relative. */
  z
    .object({
      expectClientRequest: z.object({ method: z.enum(CLIENT_FS_METHODS), path: z.string().optional() }).strict(),
      within,
      ...on,
    })
    .strict(),
  z.object({ steer: z.string(), ...on }).strict(),
  z.object({ expectTurnEnd: z.enum(OUTCOMES), within, ...on }).strict(),
  /** No observation for the session for `ms` (nothing after the turn ended, no reply to a notification). */
  z.object({ expectIdle: z.object({ ms: z.number().int().positive() }).strict(), ...on }).strict(),
  /** Event ids seen so far are 1-based, strictly increasing and gap-free; where the wire can replay, a replay from the start equals what was seen. */
  z.object({ expectNoEventLost: z.literal(true), ...on }).strict(),
  /** Remember the last event id seen as `name`. */
  z.object({ mark: z.string(), ...on }).strict(),
  /** Reconnect / replay from after a mark (SSE `Last-Event-ID`, seed `session/resume`, v1 `session/load`). */
  z.object({ resume: z.object({ after: z.union([z.string(), z.number().int()]) }).strict(), ...on }).strict(),
  /**
   * The replay that `resume` produced. `starts-after`: no replayed id is at or before the mark.
   * `exact`: the replayed ids are exactly those seen after the mark, in order, once each.
   */
  z
    .object({
      expectReplay: z
        .object({ after: z.union([z.string(), z.number().int()]), check: z.enum(['starts-after', 'exact']) })
        .strict(),
      within,
      ...on,
    })
    .strict(),
  /** A workspace file's content after the turn (the kit made the workspace, so it can look). */
  z
    .object({
      expectFile: z
        .object({ path: z.string(), content: TextPattern.optional(), absent: z.boolean().optional() })
        .strict(),
      ...on,
    })
    .strict(),
  z.object({ note: z.string(), line: z.number().optional() }).strict(),
])
export type AbstractStep = z.infer<typeof AbstractStep>

export interface Scenario {
  kind: 'scenario'
  file: string
  header: ScenarioHeader
  steps: AbstractStep[]
}

/** Parse scenario text; errors name the file and line. */
export function parseScenario(text: string, file = '<inline>'): Scenario {
  const entries: { value: unknown; line: number }[] = []
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '' || raw.trimStart().startsWith('//')) return
    try {
      entries.push({ value: JSON.parse(raw), line: i + 1 })
    } catch (e) {
      throw new Error(`${file}:${i + 1}: not JSON: ${(e as Error).message}`)
    }
  })
  if (!entries.length) throw new Error(`${file}: empty scenario`)
  const h = ScenarioHeader.safeParse(entries[0]!.value)
  if (!h.success) throw new Error(`${file}:${entries[0]!.line}: bad scenario header: ${formatIssues(h.error)}`)
  if (h.data.clientFs && h.data.transports.some((t) => t !== 'acp-v1'))
    throw new Error(
      `${file}:${entries[0]!.line}: bad scenario header: clientFs binds only to acp-v1 (the client file system is an ACP v1 capability)`,
    )
  const steps = entries.slice(1).map(({ value, line }) => {
    const s = AbstractStep.safeParse(value)
    if (!s.success) throw new Error(`${file}:${line}: bad step: ${JSON.stringify(value).slice(0, 120)}`)
    return { ...s.data, line } as AbstractStep
  })
  return { kind: 'scenario', file, header: h.data, steps }
}
