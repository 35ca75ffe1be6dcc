/**
 * The ReAct loop of one turn: steps of (steering → model call streamed as events → tool calls
 * through the permission gate → results fed back) until the model stops, `max_steps` is
 * reached, or the turn is cancelled. Provider failures and tool crashes become events and
 * error results; nothing throws out of here except an event log that refuses writes
 * (`EventLogError`), which the session turns into a failed turn.
 *
 * Event order of a turn: user_message, turn_start, then per step: step_start, text_delta* /
 * reasoning*, usage, tool_call…, then per call [permission_request, permission_reply],
 * [tool_start, tool_progress*], tool_result, and step_end; finally turn_end and one terminal
 * event — agent_result, error or cancelled. Every tool_call gets exactly one tool_result, also
 * when the call never ran (refused, or the turn was cancelled first: `error: "cancelled"`), so
 * the history a provider sees next is always well-formed.
 */
import { toolSpecs, type ToolName } from '../../generated/tools/tools.gen.ts'
import type { ToolCall } from '../../generated/schemas.gen.ts'
import type { TurnOutcome } from '../../generated/instances/forward.gen.ts'
import { ProviderError, type FinishReason, type Provider, type ToolSchema } from '../providers/types.ts'
import type { CallPreview, ToolOutcome } from '../tools/types.ts'
import { MAX_JSON_DEPTH, valueDepth } from '../json-depth.ts'
import { formatIssues } from '../../client/wire/issues.ts'
import type { TurnHost } from './turn-host.ts'
import { isCancellation, type TurnToken } from './cancel.ts'
import { EventLogError } from './event-writer.ts'
import { gate } from './permission-gate.ts'
import { startupMark } from '../startup-trace.ts'

/**
 * How a turn ended: the spec's shape (specs/asyncapi/instances.asyncapi.yaml `TurnOutcome`), since
 * a forwarded prompt answers it to the instance where the prompt arrived.
 */
export type { TurnOutcome }
export type StopReason = TurnOutcome['stop_reason']

export const DEFAULT_MAX_STEPS = 50

/** Validate a call against the tool contracts; the tool and its parsed arguments, or an error. */
export function prepareCall(host: TurnHost, call: ToolCall): { args: unknown } | { error: string } {
  const spec = Object.hasOwn(toolSpecs, call.tool) ? toolSpecs[call.tool as ToolName] : undefined
  const tool = host.tools.get(call.tool)
  const offered = host.availableTools()
  if (!tool || !(spec || tool.contract))
    return { error: `unknown tool "${call.tool}"; available: ${offered.map((t) => t.name).join(', ')}` }
  if (!offered.some((t) => t.name === call.tool)) return { error: `tool "${call.tool}" is not allowed in this session` }
  if (!spec) {
    // An extra tool (an MCP server's) checks its arguments against its own contract.
    const r = tool.contract!.parse(call.args)
    return r.ok ? { args: r.args } : { error: `invalid arguments for ${call.tool}: ${r.error}` }
  }
  const parsed = spec.params.safeParse(call.args)
  if (!parsed.success) return { error: `invalid arguments for ${call.tool}: ${formatIssues(parsed.error)}` }
  return { args: parsed.data }
}

const failText = (err: unknown): string => (err instanceof Error ? err.message : String(err))
const credentialsRefused = (err: unknown): boolean =>
  err instanceof ProviderError && (err.status === 401 || err.status === 403)

/** What the call would replace (Tool.preview), for the diffs of its tool_call and permission_request; never throws. */
async function previewCall(host: TurnHost, token: TurnToken, call: ToolCall): Promise<CallPreview | undefined> {
  const tool = host.tools.get(call.tool)
  if (!tool?.preview) return undefined
  const prepared = prepareCall(host, call)
  if ('error' in prepared) return undefined
  try {
    return await tool.preview(prepared.args, host.toolContext(call, token))
  } catch (err) {
    host.logger.debug(`preview of ${call.tool} failed`, err)
    return undefined
  }
}

/** Built-in tools that only read: they may run before the events ahead of them are on disk. */
const READS_ONLY: ReadonlySet<string> = new Set([
  'Read',
  'Grep',
  'Glob',
  'list_files',
  'lsp_diagnostics',
  'lsp_completion',
  'lsp_definition',
  'lsp_references',
])

async function runCall(
  host: TurnHost,
  token: TurnToken,
  call: ToolCall,
  refusal?: string,
  preview?: CallPreview,
): Promise<void> {
  const started = Date.now()
  const finish = (o: ToolOutcome) =>
    host.record('tool_result', {
      call_id: call.call_id,
      tool: call.tool,
      ok: o.ok,
      ...(o.ok ? { output: o.output } : { error: o.error }),
      ...(o.data !== undefined ? { data: o.data } : {}),
      duration_ms: Date.now() - started,
    })
  if (refusal !== undefined) return finish({ ok: false, error: refusal })
  const prepared = prepareCall(host, call)
  if ('error' in prepared) return finish({ ok: false, error: prepared.error })
  const tool = host.tools.get(call.tool)!
  const ctx = host.toolContext(call, token)
  let key: string
  try {
    key = tool.permissionKey(prepared.args, ctx)
  } catch (err) {
    return finish({ ok: false, error: `${call.tool} failed: ${failText(err)}` })
  }
  const verdict = await gate(host, call, key, preview)
  if (!verdict.run) return finish({ ok: false, error: verdict.reason })
  if (token.cancelled) return finish({ ok: false, error: 'cancelled' })
  host.record('tool_start', { call_id: call.call_id, tool: call.tool, args: call.args })
  // A call that may change something runs only once its record is on disk (a crash never leaves
  // an effect the log does not mention); one that only reads goes on while the events are written.
  if (!READS_ONLY.has(call.tool) || !Object.hasOwn(toolSpecs, call.tool)) await host.barrier()
  let outcome: ToolOutcome
  try {
    outcome = await tool.run(prepared.args, ctx)
  } catch (err) {
    outcome = { ok: false, error: `${call.tool} failed: ${failText(err)}` }
  }
  if (token.cancelled && outcome.ok === false && !/cancel/i.test(outcome.error))
    outcome = { ...outcome, error: `${outcome.error} (cancelled)` }
  finish(outcome)
}

/** How a model call's finish reason ends the turn when it issued no tool calls. */
const FINISH_STOP: Partial<Record<FinishReason, StopReason>> = {
  max_tokens: 'max_tokens',
  refusal: 'refusal',
  content_filter: 'refusal',
}

export async function runTurn(
  host: TurnHost,
  token: TurnToken,
  prompt: string,
  messageId: string,
  command?: { name: string; arguments: string },
): Promise<TurnOutcome> {
  host.record('user_message', { message_id: messageId, text: prompt, ...(command ? { command } : {}) })
  host.record('turn_start', { prompt, model: host.model })
  const maxSteps = host.meta.max_steps ?? DEFAULT_MAX_STEPS
  let step = 0
  let turnText = ''
  let lastStepText = ''
  let outcome: TurnOutcome | undefined
  let unanswered: ToolCall[] = []
  try {
    for (;;) {
      for (const m of await host.takeSteering()) host.record('steering', { text: m.text, message_id: m.id })
      if (token.cancelled) throw token.signal.reason
      if (step >= maxSteps) {
        outcome = { stop_reason: 'max_steps', success: false, output: lastStepText }
        break
      }
      step++
      // The model sees the history: everything so far persisted and folded into the state.
      await host.barrier()
      await host.autoCompact()
      host.record('step_start', { step })
      const provider: Provider | undefined = host.models.providerFor(host.model)
      if (!provider) throw new Error(`no provider serves model "${host.model}"`)
      const tools: ToolSchema[] = host.availableTools()
      const calls: ToolCall[] = []
      let finish: FinishReason = 'end_turn'
      lastStepText = ''
      const key = String(step)
      startupMark('session')
      let answered = false
      try {
        for await (const ev of provider.stream({
          model: host.model,
          messages: host.messages(),
          tools,
          signal: token.signal,
        })) {
          if (token.cancelled) throw token.signal.reason
          if (!answered) {
            answered = true
            startupMark('provider')
          }
          switch (ev.type) {
            case 'text':
              lastStepText += ev.text
              turnText += ev.text
              await host.emitChunk('text_delta', key, { text: ev.text, step })
              break
            case 'reasoning':
              await host.emitChunk('reasoning', key, {
                text: ev.text,
                step,
                ...(ev.signature !== undefined ? { signature: ev.signature } : {}),
              })
              break
            case 'usage': {
              const { type: _t, ...u } = ev
              const cache = (u.cache_read_tokens ?? 0) + (u.cache_write_tokens ?? 0)
              host.record('usage', {
                usage: { ...u, cache_tokens: cache, total_tokens: u.input_tokens + u.output_tokens + cache },
                context_window: provider.contextWindow(host.model),
              })
              break
            }
            case 'tool_call':
              calls.push(ev.call)
              break
            case 'finish':
              finish = ev.reason
              break
            default:
              // tool_input_start / tool_input_delta: the complete call follows as `tool_call`.
              break
          }
        }
      } catch (err) {
        if (isCancellation(err, token) || err instanceof EventLogError) throw err
        host.record('step_end', { step, stop_reason: 'error' })
        host.logger.warn(`provider error in ${host.meta.session_id}`, err)
        outcome = {
          stop_reason: 'error',
          success: false,
          output: failText(err),
          source: 'provider',
          ...(credentialsRefused(err) ? { credentialsRefused: true } : {}),
        }
        break
      }
      const refused = new Map<string, string>()
      const previews = new Map<string, CallPreview>()
      for (const call of calls) {
        // A model may nest arguments deeper than anything can safely process: record the call without them.
        if (valueDepth(call.args) > MAX_JSON_DEPTH) {
          call.args = {}
          refused.set(call.call_id, `arguments are nested deeper than ${MAX_JSON_DEPTH} levels; the call was not run`)
        }
        const preview = refused.has(call.call_id) ? undefined : await previewCall(host, token, call)
        if (preview) previews.set(call.call_id, preview)
        host.record('tool_call', {
          call_id: call.call_id,
          tool: call.tool,
          args: call.args,
          step,
          ...(preview ?? {}),
        })
      }
      unanswered = [...calls]
      while (unanswered.length) {
        if (token.cancelled) throw token.signal.reason
        await runCall(
          host,
          token,
          unanswered[0]!,
          refused.get(unanswered[0]!.call_id),
          previews.get(unanswered[0]!.call_id),
        )
        unanswered.shift()
      }
      if (token.cancelled) throw token.signal.reason
      if (calls.length) {
        host.record('step_end', { step, stop_reason: 'tool_use' })
        continue
      }
      const stop = FINISH_STOP[finish]
      if (stop) {
        host.record('step_end', { step, stop_reason: stop })
        outcome = { stop_reason: stop, success: false, output: lastStepText }
        break
      }
      if (!host.finishTurn()) {
        // A steering message arrived after the model's last call: the model must see it.
        host.record('step_end', { step, stop_reason: 'steering' })
        continue
      }
      host.record('step_end', { step, stop_reason: 'end_turn' })
      outcome = { stop_reason: 'end_turn', success: true, output: lastStepText }
      break
    }
  } catch (err) {
    if (err instanceof EventLogError) throw err
    if (!isCancellation(err, token)) {
      host.logger.error(`turn failed in ${host.meta.session_id}`, err)
      outcome = { stop_reason: 'error', success: false, output: failText(err), source: 'internal' }
    } else {
      // Every call the model asked for gets its result, also those that never ran.
      for (const call of unanswered)
        host.record('tool_result', {
          call_id: call.call_id,
          tool: call.tool,
          ok: false,
          error: 'cancelled',
          duration_ms: 0,
        })
      unanswered = []
      if (step > 0) host.record('step_end', { step, stop_reason: 'cancelled' })
      outcome = {
        stop_reason: 'cancelled',
        success: false,
        output: turnText,
        ...(token.reason !== undefined ? { reason: token.reason } : {}),
      }
    }
  }
  await endTurn(host, outcome, step)
  return outcome
}

/** turn_end and the terminal event (awaited: the turn's events are all persisted when it resolves). */
export async function endTurn(host: TurnHost, outcome: TurnOutcome, steps: number): Promise<void> {
  host.record('turn_end', { stop_reason: outcome.stop_reason, steps })
  if (outcome.stop_reason === 'cancelled')
    await host.emit('cancelled', {
      partial_output: outcome.output,
      reason: outcome.reason ?? 'cancelled by the client',
    })
  else if (outcome.stop_reason === 'error')
    await host.emit('error', { message: outcome.output, source: outcome.source ?? 'internal' })
  else
    await host.emit('agent_result', {
      success: outcome.success,
      output: outcome.output,
      usage: host.turnUsage(),
      steps,
    })
}
