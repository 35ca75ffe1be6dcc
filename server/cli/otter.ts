/** `chimera otter serve`: the HTTP + SSE server, or ACP over stdio with `--acp` (seeds/000, 001). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { VERSION } from '../version.ts'
import { parsePort, repeatable } from './args.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run otter as a headless HTTP + SSE server (or ACP over stdio with --acp)' },
  args: {
    port: { type: 'string', description: 'Port to listen on', default: '5173' },
    host: { type: 'string', description: 'Hostname / interface to bind', default: '127.0.0.1' },
    cors: { type: 'string', description: 'Browser origin to allow (repeatable)' },
    acp: { type: 'boolean', description: 'Run the ACP JSON-RPC server on stdio instead of HTTP', default: false },
    'auth-token': { type: 'string', description: 'Master bearer token (default: $OTTER_SERVER_TOKEN)' },
    'tls-cert': { type: 'string', description: 'TLS certificate (PEM); needs --tls-key' },
    'tls-key': { type: 'string', description: 'TLS private key (PEM); needs --tls-cert' },
    insecure: { type: 'boolean', description: 'Allow a non-loopback bind without a token', default: false },
    cwd: { type: 'string', description: 'Working directory for sessions' },
    model: { type: 'string', description: 'Model id (default: offline)' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
  },
  async run({ args, rawArgs }) {
    const logger = createLogger({ level: levelFromEnv(), name: 'otter' })
    if (args.acp) {
      const { serveAcpStdio } = await import('./serve-acp.ts')
      return serveAcpStdio('otter', VERSION, logger)
    }
    const { serveHttp } = await import('./serve-http.ts')
    await serveHttp({
      agent: 'otter',
      host: args.host,
      port: parsePort(args.port, 5173),
      token: args['auth-token'] ?? process.env.OTTER_SERVER_TOKEN ?? undefined,
      tlsCert: args['tls-cert'],
      tlsKey: args['tls-key'],
      insecure: args.insecure,
      cors: repeatable(rawArgs, '--cors'),
      version: VERSION,
      logger,
    })
  },
})

export default defineCommand({
  meta: { name: 'otter', description: 'The otter agent: HTTP + SSE server and ACP agent' },
  subCommands: { serve },
})
