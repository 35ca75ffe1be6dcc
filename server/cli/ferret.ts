/** `chimera ferret serve`: ACP over stdio, and HTTP beside it with `--http` (docs/zed.md). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { BRIDGE_ARGS, HTTP_ARGS, runServe, serveSessionArgs } from './serve-command.ts'
import { serveSubCommands } from './serve-subcommands.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run ferret as an ACP agent on stdio (and HTTP + SSE beside it with --http)' },
  args: {
    http: { type: 'boolean', description: 'Also serve HTTP + SSE over the same sessions', default: false },
    ...HTTP_ARGS,
    ...serveSessionArgs('auto', 'edits and read-only commands run, other commands and MCP tools ask the editor'),
    ...BRIDGE_ARGS,
  },
  subCommands: serveSubCommands('ferret'),
  run: ({ args, rawArgs }) =>
    runServe(
      'ferret',
      { acp: true, http: args.http },
      args,
      rawArgs,
      createLogger({ level: levelFromEnv(), name: 'ferret' }),
    ),
})

export default defineCommand({
  meta: { name: 'ferret', description: 'The ferret IDE bridge: ACP agent for Zed and other editors' },
  subCommands: { serve },
})
