/** `chimera ferret serve`: ACP over stdio by default, HTTP with `--http` (seeds/002). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { VERSION } from '../version.ts'
import { parsePort } from './args.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run ferret as an ACP agent on stdio (HTTP with --http)' },
  args: {
    http: { type: 'boolean', description: 'Serve HTTP + SSE instead of ACP on stdio', default: false },
    port: { type: 'string', description: 'HTTP port (with --http)', default: '5173' },
    host: { type: 'string', description: 'HTTP bind address (with --http)', default: '127.0.0.1' },
    'auth-token': { type: 'string', description: 'Master bearer token (default: $FERRET_SERVER_TOKEN)' },
    insecure: { type: 'boolean', description: 'Allow a non-loopback bind without a token', default: false },
    cwd: { type: 'string', description: 'Working directory for sessions' },
    model: { type: 'string', description: 'Model id (default: offline)' },
    sandbox: { type: 'enum', options: ['read-only', 'workspace-write', 'danger-full-access'], description: 'Sandbox mode', default: 'workspace-write' },
    approval: { type: 'enum', options: ['auto', 'ask', 'allow', 'deny', 'read-only'], description: 'Approval preset', default: 'auto' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
  },
  async run({ args }) {
    const logger = createLogger({ level: levelFromEnv(), name: 'ferret' })
    if (!args.http) {
      const { serveAcpStdio } = await import('./serve-acp.ts')
      return serveAcpStdio('ferret', VERSION, logger)
    }
    const { serveHttp } = await import('./serve-http.ts')
    await serveHttp({
      agent: 'ferret',
      host: args.host,
      port: parsePort(args.port, 5173),
      token: args['auth-token'] ?? process.env.FERRET_SERVER_TOKEN ?? undefined,
      insecure: args.insecure,
      version: VERSION,
      logger,
    })
  },
})

export default defineCommand({
  meta: { name: 'ferret', description: 'The ferret IDE bridge: ACP agent for Zed and other editors' },
  subCommands: { serve },
})
