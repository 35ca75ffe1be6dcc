/**
 * The ACP v1 wire as a mapping of the canonical event stream: one row per event type, each a
 * pure function of that event (and the session's working directory, for absolute paths), so
 * `session/load` replays history through the same rows as the live stream. The table is typed
 * over every event type: a new type does not compile until this wire decides what it shows.
 * Only stable v1 `sessionUpdate` kinds appear (the SDK client drops anything else); our extras
 * ride in `_meta` under `chimera/…` keys.
 *
 * | event              | session/update                                                       |
 * |--------------------|----------------------------------------------------------------------|
 * | user_message       | user_message_chunk (text, messageId)                                 |
 * | turn_start (first) | session_info_update {title: the listed title, updatedAt}             |
 * | session_renamed    | session_info_update {title: the new title, or the derived one}       |
 * | text_delta         | agent_message_chunk (text, messageId)                                |
 * | reasoning          | agent_thought_chunk (text)                                           |
 * | tool_call          | tool_call {status: pending, kind, title, locations, rawInput, diff}  |
 * | tool_start         | tool_call_update {status: in_progress}                               |
 * | tool_progress      | tool_call_update {content: latest output chunk}                      |
 * | tool_result        | tool_call_update {status: completed/failed, content, rawOutput}      |
 * | usage              | usage_update {used: context tokens, size: context window}           |
 * | mode_changed       | current_mode_update + config_option_update                           |
 * | model_changed      | config_option_update                                                 |
 * | steering           | user_message_chunk (`_meta.chimera/steering`)                        |
 * | error              | agent_message_chunk with the error text (the prompt answers -32603)  |
 * | notice             | agent_message_chunk (`_meta.chimera/notice`)                         |
 * | undo / redo        | agent_message_chunk of the reply line                                |
 * | plan               | plan {entries} (complete list; `_meta.chimera/toolCallId`)           |
 * | permission_request | nothing: it is the `session/request_permission` request              |
 * | every other type   | nothing                                                              |
 * The config rows read the session's current model/mode for the other selector (the spec wants
 * the complete option list).
 */
import type { z } from 'zod'
import type { SessionUpdateSchema } from '../../../generated/acp/v1-schema.gen.ts'
import type { AnyEvent, EventOf, EventType } from '../../events/event-types.ts'
import { EDIT_TOOLS, textContent, toolDiff, toolKind, toolLocations, toolTitle } from './tool-view.ts'

export type V1Update = z.input<typeof SessionUpdateSchema>

/** What a row may know besides the event: fixed per session. */
export interface V1MapContext {
  cwd: string
  /** The config options after a model or mode change (the complete list, as the spec wants). */
  configOptions(
    model: string,
    mode: string,
  ): Extract<V1Update, { sessionUpdate: 'config_option_update' }>['configOptions']
  model: () => string
  mode: () => string
  /** The session's title as `session/list` reports it now (`listedTitle` of its summary). */
  title?: () => string | undefined
  /**
   * The client advertised `_meta.terminal_output` (Zed): shell calls show as a display terminal
   * (`terminal` content + `_meta.terminal_info|terminal_output|terminal_exit`, the id being the
   * call id), because Zed hides plain text in an `execute` card (docs/zed.md).
   */
  terminalOutput?: boolean
  /**
   * Output streamed so far per running call: `content` of a `tool_call_update` replaces the
   * card's content, so each progress update carries the tail of everything so far.
   */
  outputs?: Map<string, string>
  /**
   * Replaying a history (`session/load`): calls whose result is in it. Their progress is not
   * sent (the result carries the output), so a replay is not a copy of every progress tail.
   */
  finished?: ReadonlySet<string>
}

/**
 * How much streamed output a progress update carries (the tail of all output so far; the
 * result has the whole). Small, since each update resends it: progress is coalesced to one
 * event per 50 ms, so a running command costs at most ~160 KiB/s on the wire.
 */
export const PROGRESS_TAIL_CHARS = 8 * 1024
const SHELL_TOOLS: ReadonlySet<string> = new Set(['Bash'])
const displayTerminal = (e: { data: { tool: string } }, c: V1MapContext): boolean =>
  c.terminalOutput === true && SHELL_TOOLS.has(e.data.tool)
const terminalContent = (id: string) => [{ type: 'terminal' as const, terminalId: id }]

type Row<T extends EventType> = (e: EventOf<T>, c: V1MapContext) => V1Update[]
const none = (): V1Update[] => []
const text = (t: string) => ({ type: 'text' as const, text: t })
const eventMeta = (e: AnyEvent) => ({ 'chimera/eventId': e.seq })

/** A session's title: the first non-blank line of its first prompt, at most 100 characters. */
export const sessionTitle = (prompt: string): string =>
  (prompt.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 100)

/** The title a listing shows: the one a client gave (`PATCH /sessions/{id}`), else derived from the first prompt. */
export const listedTitle = (s: { title?: string; prompt?: string }): string | undefined =>
  s.title ?? (s.prompt ? sessionTitle(s.prompt) : undefined)

export const V1_EVENT_MAP: { [T in EventType]: Row<T> } = {
  user_message: (e) => [
    {
      sessionUpdate: 'user_message_chunk',
      content: text(e.data.text),
      messageId: e.data.message_id,
      _meta: eventMeta(e),
    },
  ],
  // The first turn names the session (as `session/list` does): Zed titles its thread from this.
  // A title a client gave first is kept.
  turn_start: (e, c) =>
    e.turn === 0
      ? [
          {
            sessionUpdate: 'session_info_update',
            title: c.title?.() ?? sessionTitle(e.data.prompt),
            updatedAt: e.ts,
            _meta: eventMeta(e),
          },
        ]
      : [],
  step_start: none,
  text_delta: (e) => [
    {
      sessionUpdate: 'agent_message_chunk',
      content: text(e.data.text),
      ...(e.data.message_id ? { messageId: e.data.message_id } : {}),
      _meta: eventMeta(e),
    },
  ],
  reasoning: (e) =>
    e.data.text ? [{ sessionUpdate: 'agent_thought_chunk', content: text(e.data.text), _meta: eventMeta(e) }] : [],
  tool_call: (e, c) => {
    const diff = toolDiff(c.cwd, e.data.tool, e.data.args, e.data.old_text)
    return [
      {
        sessionUpdate: 'tool_call',
        toolCallId: e.data.call_id,
        title: toolTitle(e.data.tool, e.data.args),
        kind: toolKind(e.data.tool),
        status: 'pending',
        locations: toolLocations(c.cwd, e.data.args),
        rawInput: e.data.args,
        ...(diff.length ? { content: diff } : {}),
        ...(displayTerminal(e, c) ? { content: terminalContent(e.data.call_id) } : {}),
        _meta: {
          ...eventMeta(e),
          'chimera/tool': e.data.tool,
          ...(displayTerminal(e, c) ? { terminal_info: { terminal_id: e.data.call_id, cwd: c.cwd } } : {}),
        },
      },
    ]
  },
  tool_start: (e) => [
    { sessionUpdate: 'tool_call_update', toolCallId: e.data.call_id, status: 'in_progress', _meta: eventMeta(e) },
  ],
  tool_progress: (e, c) => {
    const out = (e.data.stdout ?? '') + (e.data.stderr ?? '')
    if (!out || c.finished?.has(e.data.call_id)) return []
    const id = e.data.call_id
    if (displayTerminal(e, c))
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: id,
          _meta: { ...eventMeta(e), terminal_output: { terminal_id: id, data: out } },
        },
      ]
    const all = ((c.outputs?.get(id) ?? '') + out).slice(-PROGRESS_TAIL_CHARS)
    c.outputs?.set(id, all)
    return [{ sessionUpdate: 'tool_call_update', toolCallId: id, content: [textContent(all)], _meta: eventMeta(e) }]
  },
  tool_result: (e, c) => {
    c.outputs?.delete(e.data.call_id)
    const body = e.data.ok ? (e.data.output ?? '') : (e.data.error ?? 'failed')
    if (displayTerminal(e, c)) {
      const d = (e.data.data ?? {}) as { exitCode?: unknown; signal?: unknown }
      const exit = {
        terminal_id: e.data.call_id,
        exit_code: typeof d.exitCode === 'number' ? d.exitCode : e.data.ok ? 0 : null,
        signal: typeof d.signal === 'string' ? d.signal : null,
      }
      return [
        {
          sessionUpdate: 'tool_call_update',
          toolCallId: e.data.call_id,
          status: e.data.ok ? 'completed' : 'failed',
          content: terminalContent(e.data.call_id),
          rawOutput: e.data.ok ? { output: e.data.output ?? '' } : { error: body },
          _meta: {
            ...eventMeta(e),
            terminal_exit: exit,
            ...(e.data.duration_ms !== undefined ? { 'chimera/durationMs': e.data.duration_ms } : {}),
          },
        },
      ]
    }
    // An edit keeps the diff it showed at the call; `content` would replace it.
    const keepDiff = e.data.ok && EDIT_TOOLS.has(e.data.tool)
    return [
      {
        sessionUpdate: 'tool_call_update',
        toolCallId: e.data.call_id,
        status: e.data.ok ? 'completed' : 'failed',
        ...(keepDiff ? {} : { content: body ? [textContent(body)] : [] }),
        rawOutput: e.data.ok ? { output: e.data.output ?? '' } : { error: body },
        _meta: {
          ...eventMeta(e),
          ...(e.data.duration_ms !== undefined ? { 'chimera/durationMs': e.data.duration_ms } : {}),
        },
      },
    ]
  },
  permission_request: none,
  permission_reply: none,
  sandbox_violation: none,
  usage: (e) => {
    const u = e.data.usage
    const used =
      u.input_tokens + (u.cache_tokens ?? (u.cache_read_tokens ?? 0) + (u.cache_write_tokens ?? 0)) + u.output_tokens
    return [
      {
        sessionUpdate: 'usage_update',
        used,
        size: Math.max(e.data.context_window ?? 0, 0),
        _meta: { ...eventMeta(e), 'chimera/usage': u },
      },
    ]
  },
  step_end: none,
  turn_end: none,
  agent_result: none,
  error: (e) => [
    {
      sessionUpdate: 'agent_message_chunk',
      content: text(`\n\nError: ${e.data.message}`),
      _meta: { ...eventMeta(e), 'chimera/error': true },
    },
  ],
  cancelled: none,
  compaction: none,
  steering: (e) => [
    {
      sessionUpdate: 'user_message_chunk',
      content: text(e.data.text),
      _meta: { ...eventMeta(e), 'chimera/steering': true },
    },
  ],
  model_changed: (e, c) => [
    {
      sessionUpdate: 'config_option_update',
      configOptions: c.configOptions(e.data.new, c.mode()),
      _meta: eventMeta(e),
    },
  ],
  mode_changed: (e, c) => [
    { sessionUpdate: 'current_mode_update', currentModeId: e.data.new, _meta: eventMeta(e) },
    {
      sessionUpdate: 'config_option_update',
      configOptions: c.configOptions(c.model(), e.data.new),
      _meta: eventMeta(e),
    },
  ],
  approval_changed: none,
  notice: (e) => [
    {
      sessionUpdate: 'agent_message_chunk',
      content: text(`\n[${e.data.level}] ${e.data.text}\n`),
      _meta: { ...eventMeta(e), 'chimera/notice': e.data.level },
    },
  ],
  file_edit: none,
  file_open: none,
  undo: (e) => [{ sessionUpdate: 'agent_message_chunk', content: text(e.data.output), _meta: eventMeta(e) }],
  redo: (e) => [{ sessionUpdate: 'agent_message_chunk', content: text(e.data.output), _meta: eventMeta(e) }],
  // A cleared title falls back to the derived one (null only while there is no prompt yet).
  session_renamed: (e, c) => [
    {
      sessionUpdate: 'session_info_update',
      title: e.data.title ?? c.title?.() ?? null,
      updatedAt: e.ts,
      _meta: eventMeta(e),
    },
  ],
  plan: (e) => [
    {
      sessionUpdate: 'plan',
      entries: e.data.entries.map((p) => ({ content: p.content, priority: p.priority, status: p.status })),
      _meta: { ...eventMeta(e), ...(e.data.call_id ? { 'chimera/toolCallId': e.data.call_id } : {}) },
    },
  ],
}

/** The v1 updates of one event. */
export function toV1Updates(e: AnyEvent, c: V1MapContext): V1Update[] {
  return (V1_EVENT_MAP[e.type] as Row<typeof e.type>)(e as never, c)
}
