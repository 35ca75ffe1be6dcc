/** `chimera otter serve`: the HTTP + SSE server, or ACP over stdio with `--acp` (seeds/000, 001). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { HTTP_ARGS, runServe, serveSessionArgs } from './serve-command.ts'
import { serveSubCommands } from './serve-subcommands.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run otter as a headless HTTP + SSE server (or ACP over stdio with --acp)' },
  args: {
    ...HTTP_ARGS,
    acp: { type: 'boolean', description: 'Run the ACP JSON-RPC server on stdio instead of HTTP', default: false },
    ...serveSessionArgs('allow'),
  },
  subCommands: serveSubCommands('otter'),
  run: ({ args, rawArgs }) => runServe('otter', { acp: args.acp, http: !args.acp }, args, rawArgs, createLogger({ level: levelFromEnv(), name: 'otter' })),
})

export default defineCommand({
  meta: { name: 'otter', description: 'The otter agent: HTTP + SSE server and ACP agent' },
  subCommands: { serve },
})
