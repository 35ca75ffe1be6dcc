/** The permission gate of one tool call (decision table in permissions.ts). */
import { randomUUID } from '../platform/random.ts'
import type { ToolCall } from '../../generated/schemas.gen.ts'
import { applyReply, approvalVerdict, riskOf, type GateOutcome } from './permissions.ts'
import type { CallPreview } from '../tools/types.ts'
import { ruleFor } from './tool-patterns.ts'
import type { TurnHost } from './turn-host.ts'

const APPROVAL_REASON: Record<string, string> = {
  deny: 'approval requests are denied in this session (--approval deny)',
  'read-only':
    'the read-only approval preset runs only tools and commands that do not change anything (--approval read-only)',
}

export async function gate(host: TurnHost, call: ToolCall, key: string, preview?: CallPreview): Promise<GateOutcome> {
  const rule = ruleFor(host.rules, call.tool) ?? host.tools.get(call.tool)?.contract?.permission ?? 'ask'
  if (rule === 'allow') return { run: true, via: 'rule' }
  if (rule === 'deny') return { run: false, reason: `${call.tool} is denied by the permission rules` }
  const cwd = host.meta.cwd
  const remembered = await host.audit.lookup(cwd, call.tool, key)
  if (remembered === 'always') return { run: true, via: 'audit-log' }
  if (remembered === 'never')
    return { run: false, reason: `${call.tool} was denied earlier with "never" for these arguments` }
  const risk = riskOf(call.tool, call.args)
  const policy = host.approval
  const verdict = approvalVerdict(policy, call.tool, risk)
  if (verdict === 'run') return { run: true, via: `approval:${policy}` }
  if (verdict === 'refuse')
    return {
      run: false,
      reason: `${call.tool} needs approval, and ${APPROVAL_REASON[policy] ?? `the approval policy is ${policy}`}`,
    }
  const nobody = host.unanswerable()
  if (nobody !== undefined)
    return { run: false, reason: `${call.tool} needs approval (--approval ${policy}), and ${nobody}` }
  const requestId = `perm-${randomUUID()}`
  const reply = host.waitForPermission(requestId)
  await host.emit('permission_request', {
    request_id: requestId,
    call_id: call.call_id,
    tool: call.tool,
    args: call.args,
    risk,
    options: ['allow', 'always', 'deny', 'never'],
    ...(preview ?? {}),
  })
  // A cancelled turn releases the request: the session answers it with 'cancelled'.
  const { decision, source } = await reply
  await host.emit('permission_reply', { request_id: requestId, decision, source })
  const gone = host.unanswerable()
  if (decision === 'deny' && gone !== undefined)
    return { run: false, reason: `${call.tool} needs approval (--approval ${policy}), and ${gone}` }
  return applyReply(decision, host.audit, { session_id: host.meta.session_id, cwd, tool: call.tool, key })
}
