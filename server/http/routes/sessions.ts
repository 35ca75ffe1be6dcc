/**
 * The plural session family (docs/http.md "Endpoints"): list persisted and live sessions, show one
 * (summary + events), create one with its first turn, add a turn, cancel. Sessions known only
 * from disk are loaded into the manager when a turn is added.
 */
import { checkUserMessage } from '../../core/message-limit.ts'
import type { ListFilter } from '../../store/types.ts'
import { parseSince } from '../../store/since.ts'
import type { OperationHandlers, OperationInput } from '../app.ts'
import { acknowledge, anySession, created, type HttpDeps } from '../deps.ts'
import { HttpError, jsonResponse } from '../errors.ts'
import { createOptions } from './create-options.ts'
import { sessionDetail } from './session-detail.ts'

export const DEFAULT_LIST_LIMIT = 20

function listFilter(q: OperationInput<'sessions.list'>['query']): ListFilter {
  const f: ListFilter = { limit: q.limit ?? DEFAULT_LIST_LIMIT }
  if (typeof q.since === 'string') {
    try {
      f.since = parseSince(q.since)
    } catch (err) {
      throw new HttpError('invalid_query', `since: ${(err as Error).message}`, {
        detail: [{ path: 'since', message: (err as Error).message }],
      })
    }
  }
  if (typeof q.model === 'string') f.model = q.model
  return f
}

type Handlers = Pick<
  OperationHandlers,
  'sessions.list' | 'sessions.get' | 'sessions.create' | 'sessions.addTurn' | 'sessions.cancel'
>

export function sessionsHandlers(deps: HttpDeps): Handlers {
  return {
    'sessions.list': async ({ query }) => {
      // The one listing (persisted and live sessions, store/listing.ts): its first page.
      const { sessions } = await deps.manager.listSessions(listFilter(query))
      return jsonResponse(200, { sessions })
    },
    'sessions.get': async ({ path }) => jsonResponse(200, await sessionDetail(deps, path.id)),
    'sessions.create': async ({ body }) => {
      const b = body
      // Checked before the session is made: a prompt over the limit creates nothing (413).
      checkUserMessage(b.prompt)
      const session = await deps.manager.create(createOptions(deps, b))
      await created(deps, session)
      await acknowledge(deps, session, session.prompt(b.prompt))
      return jsonResponse(201, { session_id: session.id, status: 'running' })
    },
    'sessions.addTurn': async ({ path, body }) => {
      const session = await anySession(deps, path.id)
      await acknowledge(deps, session, session.prompt(body.prompt))
      return jsonResponse(202, { session_id: session.id, status: 'running' })
    },
    'sessions.cancel': async ({ path }) => {
      const id = path.id
      // A session known only from disk runs nothing; loading it just to check is enough.
      const session = deps.manager.peek(id) ?? (await anySession(deps, id))
      session.touch()
      session.cancel()
      return jsonResponse(204, null)
    },
  }
}
