/** `chimera ferret serve`: ACP over stdio by default, HTTP with `--http` (seeds/002). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { HTTP_ARGS, runServe } from './serve-command.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run ferret as an ACP agent on stdio (HTTP with --http)' },
  args: {
    http: { type: 'boolean', description: 'Serve HTTP + SSE instead of ACP on stdio', default: false },
    ...HTTP_ARGS,
    cwd: { type: 'string', description: 'Working directory for sessions' },
    model: { type: 'string', description: 'Model id (default: offline)' },
    sandbox: { type: 'enum', options: ['read-only', 'workspace-write', 'danger-full-access'], description: 'Sandbox mode', default: 'workspace-write' },
    approval: { type: 'enum', options: ['auto', 'ask', 'allow', 'deny', 'read-only'], description: 'Approval preset', default: 'auto' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
  },
  run: ({ args, rawArgs }) => runServe('ferret', !args.http, args, rawArgs, createLogger({ level: levelFromEnv(), name: 'ferret' })),
})

export default defineCommand({
  meta: { name: 'ferret', description: 'The ferret IDE bridge: ACP agent for Zed and other editors' },
  subCommands: { serve },
})
