/**
 * A `permission_request` event becomes a `session/request_permission` request to the client;
 * its outcome answers the core (`cancelled`, a malformed answer, or no answer because the input
 * ended, counts as deny). Answered elsewhere, the request is withdrawn through its AbortController.
 */
import type { z } from 'zod'
import type { RequestPermissionResponseSchema } from '../../../generated/acp/v1-schema.gen.ts'
import { RequestPermissionResponseSchema as PermissionResponse } from '../../../generated/acp/v1-schema.gen.ts'
import type { PermissionDecision } from '../../core/permissions.ts'
import type { SessionManager } from '../../core/manager.ts'
import type { EventOf } from '../../events/event-types.ts'
import type { Connection } from '../../../client/wire/jsonrpc/connection.ts'
import type { Logger } from '../../log.ts'
import type { Attachment } from './agent-types.ts'
import { toolDiff, toolKind, toolLocations, toolTitle } from './tool-view.ts'

type PermissionResponse = z.output<typeof RequestPermissionResponseSchema>

const OPTION: Record<
  PermissionDecision,
  { name: string; kind: 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always' }
> = {
  allow: { name: 'Allow once', kind: 'allow_once' },
  always: { name: 'Always allow', kind: 'allow_always' },
  deny: { name: 'Reject', kind: 'reject_once' },
  never: { name: 'Always reject', kind: 'reject_always' },
}

/**
 * Ask the client about a pending permission request (not pending any more: nothing is asked).
 * `keepPending` (a network connection): a connection that closes before answering leaves the
 * request pending for another client (REST, another connection, this one after `session/load`).
 */
export function askPermission(
  conn: Connection,
  logger: Logger,
  att: Attachment,
  e: EventOf<'permission_request'>,
  manager: SessionManager,
  keepPending = false,
): void {
  const { request_id: rid, tool, args, call_id: callId } = e.data
  const router = manager.router
  const id = att.session.id
  // Pending here, where the session runs; run by another instance, the request is asked (it may
  // be answered there first: its `permission_reply` withdraws this one, and first answer wins).
  if (router.runsHere(id) && !(manager.peek(id) ?? att.session).pendingPermissions().includes(rid)) return
  const reply = (decision: PermissionDecision): void => {
    router
      .replyPermission(id, rid, decision, 'acp')
      .catch((err: unknown) => logger.warn(`permission ${rid}: the answer did not reach its session`, err))
  }
  const cwd = att.session.meta.cwd
  const ctl = new AbortController()
  att.asks.set(rid, ctl)
  const diff = toolDiff(cwd, tool, args, e.data.old_text)
  const params = {
    sessionId: att.session.id,
    toolCall: {
      toolCallId: callId,
      title: toolTitle(tool, args),
      kind: toolKind(tool),
      status: 'pending',
      locations: toolLocations(cwd, args),
      rawInput: args,
      ...(diff.length ? { content: diff } : {}),
    },
    options: e.data.options.map((d) => ({ optionId: d, ...OPTION[d] })),
    _meta: { 'chimera/requestId': rid, ...(e.data.risk ? { 'chimera/risk': e.data.risk } : {}) },
  }
  conn
    .request('session/request_permission', params, { signal: ctl.signal })
    .then((raw) => {
      const parsed = PermissionResponse.safeParse(raw)
      const r: PermissionResponse['outcome'] | undefined = parsed.success ? parsed.data.outcome : undefined
      const chosen = r?.outcome === 'selected' ? e.data.options.find((o) => o === r.optionId) : undefined
      if (!chosen) logger.info(`permission ${rid}: ${r ? `outcome ${r.outcome}` : 'malformed answer'}; denying`)
      reply(chosen ?? 'deny')
    })
    .catch((err: unknown) => {
      if (ctl.signal.aborted || (keepPending && conn.signal.aborted)) return
      // The client failed the request or went away (input ended): nobody will answer.
      logger.info(`permission ${rid} not answered by the client; denying`, err)
      reply('deny')
    })
    .finally(() => att.asks.delete(rid))
}
