/**
 * `chimera relay serve`: the cloud bridge's relay (docs/bridge.md). Editors' `chimera ferret serve
 * --bridge` dial in with the bridge token; remote ACP clients connect to `/acp` with a client token
 * and reach the editor's sessions. It runs no agent and keeps no session; it runs until a signal.
 */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { UsageError, parsePort, repeatable } from './args.ts'

export const RELAY_BRIDGE_TOKEN_ENV = 'CHIMERA_RELAY_BRIDGE_TOKEN'
export const RELAY_CLIENT_TOKENS_ENV = 'CHIMERA_RELAY_CLIENT_TOKENS'

const serve = defineCommand({
  meta: {
    name: 'serve',
    description: 'Run the relay: editors dial in on /bridge, remote ACP clients connect on /acp',
  },
  args: {
    port: { type: 'string', description: 'Port (0: any free port)', default: '8787' },
    host: { type: 'string', description: 'Bind address', default: '127.0.0.1' },
    'bridge-token': {
      type: 'string',
      description: `The token editors present on /bridge (default: $${RELAY_BRIDGE_TOKEN_ENV})`,
    },
    'client-token': {
      type: 'string',
      description: `A token remote clients present on /acp (repeatable; default: $${RELAY_CLIENT_TOKENS_ENV}, comma-separated)`,
    },
    'tls-cert': { type: 'string', description: 'TLS certificate (PEM); needs --tls-key' },
    'tls-key': { type: 'string', description: 'TLS private key (PEM); needs --tls-cert' },
    'max-message-bytes': { type: 'string', description: 'Largest WebSocket message either way', default: '33554432' },
    'idle-timeout': {
      type: 'string',
      description: 'Close a remote client silent this many seconds either way (0: never)',
      default: '600',
    },
    'max-clients': { type: 'string', description: 'Remote clients at once', default: '64' },
  },
  run: async ({ args, rawArgs }) => {
    const logger = createLogger({ level: levelFromEnv(), name: 'relay' })
    const bridgeToken = token(args['bridge-token'], process.env[RELAY_BRIDGE_TOKEN_ENV], '--bridge-token')
    const clientTokens = repeatable(rawArgs, '--client-token')
    const fromEnv = (process.env[RELAY_CLIENT_TOKENS_ENV] ?? '').split(',').map((t) => t.trim())
    const clients = (clientTokens.length ? clientTokens : fromEnv).filter((t) => t !== '')
    if (!bridgeToken)
      throw new UsageError(`the relay needs the editors' token: set $${RELAY_BRIDGE_TOKEN_ENV} (or --bridge-token)`)
    if (!clients.length)
      throw new UsageError(
        `the relay needs at least one client token: set $${RELAY_CLIENT_TOKENS_ENV} (comma-separated) or --client-token`,
      )
    if (clients.some((c) => c === bridgeToken))
      throw new UsageError('a client token must differ from the bridge token (a client could pose as the editor)')
    if (Boolean(args['tls-cert']) !== Boolean(args['tls-key']))
      throw new UsageError('--tls-cert and --tls-key must be given together')
    const tls =
      args['tls-cert'] && args['tls-key']
        ? (await import('./serve-http.ts')).tlsMaterial(args['tls-cert'], args['tls-key'])
        : undefined
    const { startRelay } = await import('../bridge/relay.ts')
    const relay = await startRelay({
      host: args.host,
      port: parsePort(args.port, 8787),
      tls,
      bridgeToken,
      clientTokens: clients,
      maxMessageBytes: positive(args['max-message-bytes'], '--max-message-bytes'),
      idleTimeoutMs: seconds(args['idle-timeout'], '--idle-timeout') * 1000,
      maxClients: positive(args['max-clients'], '--max-clients'),
      logger,
    })
    const ws = relay.url.replace(/^http/, 'ws')
    logger.info(`relay listening on ${relay.url} (editors: ${ws}/bridge, remote clients: ${ws}/acp)`)
    await new Promise<void>((resolve) => {
      const stop = (sig: NodeJS.Signals): void => {
        logger.info(`received ${sig}: shutting down`)
        void relay.close().then(resolve)
      }
      process.once('SIGTERM', stop)
      process.once('SIGINT', stop)
    })
  },
})

function token(flag: string | undefined, env: string | undefined, name: string): string | undefined {
  const v = flag ?? env
  if (v !== undefined && v.trim() === '') throw new UsageError(`${name} is empty: give a token`)
  return v
}

function positive(v: string, flag: string): number {
  const n = Number(v)
  if (!/^\d+$/.test(v) || n < 1) throw new UsageError(`${flag} must be a positive integer, got ${JSON.stringify(v)}`)
  return n
}

function seconds(v: string, flag: string): number {
  const n = Number(v)
  if (v.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${flag} must be seconds (0: never), got ${JSON.stringify(v)}`)
  return n
}

export default defineCommand({
  meta: {
    name: 'relay',
    description: "The cloud bridge's relay: editors' ferret dials out to it, remote ACP clients reach their sessions",
  },
  subCommands: { serve },
})
