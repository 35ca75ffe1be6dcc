/**
 * The ReAct loop of one turn: steps of (steering → model call streamed as events → tool calls
 * through the permission gate → results fed back) until the model stops, `max_steps` is
 * reached, or the turn is cancelled. Provider failures and tool crashes become events and
 * error results; nothing throws out of here.
 *
 * Event order of a turn: user_message, turn_start, then per step: step_start, text_delta* /
 * reasoning*, usage, tool_call, [permission_request, permission_reply], tool_progress*,
 * tool_result …, step_end; finally turn_end and one terminal event — agent_result, error or
 * cancelled.
 */
import { toolSpecs, type ToolName } from '../../generated/tools/tools.gen.ts'
import type { ToolCall } from '../../generated/schemas.gen.ts'
import type { Provider, ToolSchema } from '../providers/types.ts'
import { noFileTracking, type Tool, type ToolContext, type ToolOutcome } from '../tools/types.ts'
import type { TurnHost } from './turn-host.ts'
import { isCancellation, type TurnToken } from './cancel.ts'
import { gate } from './gate.ts'

export type StopReason = 'end_turn' | 'max_steps' | 'cancelled' | 'error'
export interface TurnOutcome {
  stop_reason: StopReason
  success: boolean
  output: string
  /** For errors: where it came from (`provider` or `internal`). */
  source?: 'provider' | 'internal'
}

const issuesText = (issues: readonly { path: readonly PropertyKey[]; message: string }[]): string =>
  issues.map((i) => `${i.path.map(String).join('.') || '(arguments)'}: ${i.message}`).join('; ')

/** Validate a call against the tool contracts; the tool and its parsed arguments, or an error. */
export function prepareCall(host: TurnHost, call: ToolCall): { tool: Tool; args: unknown } | { error: string } {
  const spec = (toolSpecs as Record<string, (typeof toolSpecs)[ToolName]>)[call.tool]
  const tool = host.tools.get(call.tool)
  if (!spec || !tool) return { error: `unknown tool "${call.tool}"; available: ${host.availableTools().map((t) => t.name).join(', ')}` }
  if (!host.availableTools().some((t) => t.name === call.tool)) return { error: `tool "${call.tool}" is not allowed in this session` }
  const parsed = spec.params.safeParse(call.args)
  if (!parsed.success) return { error: `invalid arguments for ${call.tool}: ${issuesText(parsed.error.issues)}` }
  return { tool, args: parsed.data }
}

async function runCall(host: TurnHost, token: TurnToken, call: ToolCall): Promise<void> {
  const started = Date.now()
  const finish = (o: ToolOutcome) =>
    host.emit('tool_result', {
      call_id: call.call_id,
      tool: call.tool,
      ok: o.ok,
      ...(o.ok ? { output: o.output } : { error: o.error }),
      ...(o.data !== undefined ? { data: o.data } : {}),
      duration_ms: Date.now() - started,
    })
  const prepared = prepareCall(host, call)
  if ('error' in prepared) return void (await finish({ ok: false, error: prepared.error }))
  const ctx: ToolContext = {
    cwd: host.meta.cwd,
    sandbox: host.sandbox,
    signal: token.signal,
    progress: (chunk) => void host.emit('tool_progress', { call_id: call.call_id, ...chunk }),
    sandboxViolation: (v) => void host.emit('sandbox_violation', v),
    notice: (level, text) => void host.emit('notice', { level, text }),
    protectedPaths: [],
    readOnlyPaths: [],
    allowUnconfined: false,
    toolEnv: {},
    files: noFileTracking,
  }
  let key: string
  try {
    key = prepared.tool.permissionKey(prepared.args, ctx)
  } catch (err) {
    return void (await finish({ ok: false, error: `${call.tool} failed: ${err instanceof Error ? err.message : String(err)}` }))
  }
  const verdict = await gate(host, call, key)
  if (!verdict.run) return void (await finish({ ok: false, error: verdict.reason }))
  let outcome: ToolOutcome
  try {
    outcome = await prepared.tool.run(prepared.args, ctx)
  } catch (err) {
    outcome = { ok: false, error: `${call.tool} failed: ${err instanceof Error ? err.message : String(err)}` }
  }
  if (token.cancelled && outcome.ok === false && !/cancel/i.test(outcome.error)) outcome = { ...outcome, error: `${outcome.error} (cancelled)` }
  await finish(outcome)
}

export async function runTurn(host: TurnHost, token: TurnToken, prompt: string, messageId: string): Promise<TurnOutcome> {
  await host.emit('user_message', { message_id: messageId, text: prompt })
  await host.emit('turn_start', { prompt, model: host.model })
  const maxSteps = host.meta.max_steps ?? 50
  let step = 0
  let turnText = ''
  let lastStepText = ''
  let outcome: TurnOutcome | undefined
  try {
    for (;;) {
      for (const text of host.takeSteering()) await host.emit('steering', { text })
      if (token.cancelled) throw token.signal.reason
      if (step >= maxSteps) {
        outcome = { stop_reason: 'max_steps', success: false, output: lastStepText }
        break
      }
      step++
      await host.autoCompact()
      await host.emit('step_start', { step })
      const provider: Provider | undefined = host.models.providerFor(host.model)
      if (!provider) throw new Error(`no provider serves model "${host.model}"`)
      const tools: ToolSchema[] = host.availableTools()
      const calls: ToolCall[] = []
      lastStepText = ''
      try {
        for await (const ev of provider.stream({ model: host.model, messages: host.messages(), tools, signal: token.signal })) {
          if (token.cancelled) throw token.signal.reason
          if (ev.type === 'text') {
            lastStepText += ev.text
            turnText += ev.text
            await host.emit('text_delta', { text: ev.text, step })
          } else if (ev.type === 'reasoning') await host.emit('reasoning', { text: ev.text, step })
          else if (ev.type === 'usage') {
            const { input_tokens, output_tokens, cost_usd } = ev
            await host.emit('usage', { usage: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens, cost_usd: cost_usd ?? 0 }, context_window: provider.contextWindow(host.model) })
          } else if (ev.type === 'tool_call') calls.push(ev.call)
        }
      } catch (err) {
        if (isCancellation(err, token)) throw err
        await host.emit('step_end', { step, stop_reason: 'error' })
        const message = err instanceof Error ? err.message : String(err)
        host.logger.warn(`provider error in ${host.meta.session_id}`, err)
        outcome = { stop_reason: 'error', success: false, output: message, source: 'provider' }
        break
      }
      for (const call of calls) await host.emit('tool_call', { call_id: call.call_id, tool: call.tool, args: call.args, step })
      for (const call of calls) {
        await runCall(host, token, call)
        if (token.cancelled) throw token.signal.reason
      }
      if (calls.length) {
        await host.emit('step_end', { step, stop_reason: 'tool_use' })
        continue
      }
      if (!host.finishTurn()) {
        // A steering message arrived after the model's last call: the model must see it.
        await host.emit('step_end', { step, stop_reason: 'steering' })
        continue
      }
      await host.emit('step_end', { step, stop_reason: 'end_turn' })
      outcome = { stop_reason: 'end_turn', success: true, output: lastStepText }
      break
    }
  } catch (err) {
    if (!isCancellation(err, token)) {
      host.logger.error(`turn failed in ${host.meta.session_id}`, err)
      outcome = { stop_reason: 'error', success: false, output: err instanceof Error ? err.message : String(err), source: 'internal' }
    } else {
      if (step > 0) await host.emit('step_end', { step, stop_reason: 'cancelled' })
      outcome = { stop_reason: 'cancelled', success: false, output: turnText }
    }
  }
  await host.emit('turn_end', { stop_reason: outcome.stop_reason, steps: step })
  if (outcome.stop_reason === 'cancelled') await host.emit('cancelled', { partial_output: outcome.output, reason: 'cancelled by the client' })
  else if (outcome.stop_reason === 'error') await host.emit('error', { message: outcome.output, source: outcome.source ?? 'internal' })
  else await host.emit('agent_result', { success: outcome.success, output: outcome.output, usage: host.turnUsage(), steps: step })
  return outcome
}
