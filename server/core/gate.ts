/** The permission gate of one tool call (decision table in permissions.ts). */
import { randomUUID } from 'node:crypto'
import type { ToolCall } from '../../generated/schemas.gen.ts'
import { applyReply, type GateOutcome } from './permissions.ts'
import type { TurnHost } from './turn-host.ts'

const RISK: Record<string, 'low' | 'medium' | 'high'> = { Bash: 'high', Write: 'medium', Edit: 'medium' }

export async function gate(host: TurnHost, call: ToolCall, key: string): Promise<GateOutcome> {
  const rule = host.rules.get(call.tool) ?? 'ask'
  if (rule === 'allow') return { run: true, via: 'rule' }
  if (rule === 'deny') return { run: false, reason: `${call.tool} is denied by the permission rules` }
  const remembered = host.audit.lookup(call.tool, key)
  if (remembered === 'always') return { run: true, via: 'audit-log' }
  if (remembered === 'never') return { run: false, reason: `${call.tool} was denied earlier with "never" for these arguments` }
  if (host.approval === 'allow') return { run: true, via: 'approval' }
  if (host.approval === 'deny') return { run: false, reason: `${call.tool} needs approval, and approval requests are denied in this session (--approval deny)` }
  const requestId = `perm-${randomUUID()}`
  const reply = host.waitForPermission(requestId)
  await host.emit('permission_request', {
    request_id: requestId,
    call_id: call.call_id,
    tool: call.tool,
    args: call.args,
    risk: RISK[call.tool] ?? 'medium',
    options: ['allow', 'always', 'deny', 'never'],
  })
  // A cancelled turn releases the request: the session answers it with 'cancelled'.
  const { decision, source } = await reply
  await host.emit('permission_reply', { request_id: requestId, decision, source })
  return applyReply(decision, host.audit, { session_id: host.meta.session_id, tool: call.tool, key })
}
