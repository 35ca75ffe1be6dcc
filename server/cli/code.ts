/** `chimera code --mode rpc`: JSON-lines RPC over stdin/stdout (seeds/004). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { UsageError } from './args.ts'

export default defineCommand({
  meta: { name: 'code', description: 'Drive an agent session headlessly (--mode rpc: JSON lines on stdin/stdout)' },
  args: {
    mode: { type: 'enum', options: ['rpc'], description: 'Interface mode', required: true },
    cwd: { type: 'string', description: 'Working directory' },
    model: { type: 'string', description: 'Model id (default: offline)' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
    approval: { type: 'enum', options: ['allow', 'deny', 'ask'], description: 'How tools that ask for permission are answered', default: 'allow' },
  },
  async run({ args }) {
    if (args.mode !== 'rpc') throw new UsageError('--mode must be rpc')
    const logger = createLogger({ level: levelFromEnv(), name: 'rpc' })
    const [{ RpcServer }, { createRpcHandlers }] = await Promise.all([import('../rpc/server.ts'), import('../rpc/handlers.ts')])
    const server = new RpcServer({ input: process.stdin, output: process.stdout, logger })
    server.setHandlers(createRpcHandlers({ model: args.model ?? 'offline', messages: () => [] }))
    await server.run()
  },
})
