/**
 * What `chimera otter serve` and `chimera ferret serve` share: the HTTP flags and the choice
 * between ACP on stdio and HTTP. Only the default transport and the token variable differ.
 */
import type { Logger } from '../log.ts'
import type { AgentName } from '../acp/dialect.ts'
import { VERSION } from '../version.ts'
import { parsePort, repeatable } from './args.ts'

export const HTTP_ARGS = {
  port: { type: 'string', description: 'HTTP port', default: '5173' },
  host: { type: 'string', description: 'HTTP bind address', default: '127.0.0.1' },
  cors: { type: 'string', description: 'Browser origin to allow (repeatable)' },
  'auth-token': { type: 'string', description: 'Master bearer token (default: $OTTER_SERVER_TOKEN / $FERRET_SERVER_TOKEN)' },
  'tls-cert': { type: 'string', description: 'TLS certificate (PEM); needs --tls-key' },
  'tls-key': { type: 'string', description: 'TLS private key (PEM); needs --tls-cert' },
  insecure: { type: 'boolean', description: 'Allow a non-loopback bind without a token', default: false },
} as const

const TOKEN_ENV: Record<AgentName, string> = { otter: 'OTTER_SERVER_TOKEN', ferret: 'FERRET_SERVER_TOKEN' }

export interface ServeArgs {
  port: string
  host: string
  'auth-token'?: string
  'tls-cert'?: string
  'tls-key'?: string
  insecure: boolean
}

/** Serve ACP on stdio (`stdio: true`) or HTTP until stopped. */
export async function runServe(agent: AgentName, stdio: boolean, args: ServeArgs, rawArgs: readonly string[], logger: Logger): Promise<void> {
  if (stdio) {
    const { serveAcpStdio } = await import('./serve-acp.ts')
    return serveAcpStdio(agent, VERSION, logger)
  }
  const { serveHttp } = await import('./serve-http.ts')
  await serveHttp({
    agent,
    host: args.host,
    port: parsePort(args.port, 5173),
    token: args['auth-token'] ?? process.env[TOKEN_ENV[agent]] ?? undefined,
    tlsCert: args['tls-cert'],
    tlsKey: args['tls-key'],
    insecure: args.insecure,
    cors: repeatable(rawArgs, '--cors'),
    version: VERSION,
    logger,
  })
}
