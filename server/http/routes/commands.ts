/**
 * Custom slash commands over HTTP (docs/commands.md "Custom slash commands over HTTP"): `GET
 * /commands` lists the palette of the server's working directory; `POST
 * /commands/{name}/invoke` renders a command and submits it as a new user turn of a live
 * session, as `POST /session/{id}/message` does (`202 {message_id, name, rendered}`). The
 * body errors come first (client/wire/http/body-errors.ts: `missing_session_id`, `args_must_be_list`,
 * `kwargs_must_be_object`), then `command_not_found` (404, with `name`), a render failure
 * `command_invoke_failed` (500), and an unknown session `session_not_found` (404).
 */
import { CustomCommands } from '../../commands/custom-commands.ts'
import type { OperationHandlers } from '../app.ts'
import { acknowledge, liveSession, type HttpDeps } from '../deps.ts'
import { HttpError, jsonResponse } from '../errors.ts'

/** The process's custom commands for `cwd` (the manager's, as `/name args` prompts see them). */
export function commandsFor(deps: HttpDeps, cwd: string): CustomCommands {
  const r = deps.manager.opts.commands?.(cwd)
  return r instanceof CustomCommands ? r : new CustomCommands({ cwd, env: deps.env })
}

export function commandsHandlers(deps: HttpDeps): Pick<OperationHandlers, 'commands.list' | 'commands.invoke'> {
  return {
    'commands.list': async () => {
      const commands = commandsFor(deps, deps.manager.opts.cwd)
      await commands.ready()
      return jsonResponse(200, commands.list())
    },
    'commands.invoke': async ({ path, body }) => {
      const name = path.name
      // The session's own working directory decides which project commands it sees.
      const cwd = deps.manager.peek(body.session_id)?.meta.cwd ?? deps.manager.opts.cwd
      const commands = commandsFor(deps, cwd)
      await commands.ready()
      const r = commands.invoke(name, body)
      const session = await liveSession(deps, r.session_id)
      let submitted
      try {
        submitted = session.promptCommand(r.rendered, { name: r.name, arguments: r.arguments })
      } catch (err) {
        throw new HttpError('command_invoke_failed', `/${r.name}: the turn could not be submitted`, {
          detail: (err as Error).message,
        })
      }
      await acknowledge(deps, session, submitted)
      return jsonResponse(202, { message_id: submitted.messageId, name: r.name, rendered: r.rendered })
    },
  }
}
