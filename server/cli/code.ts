/** `chimera code --mode rpc`: JSON-lines RPC over stdin/stdout (seeds/004). */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { UsageError } from './args.ts'
import { sessionFlags } from './session-flags.ts'

export default defineCommand({
  meta: { name: 'code', description: 'Drive an agent session headlessly (--mode rpc: JSON lines on stdin/stdout)' },
  args: {
    mode: { type: 'enum', options: ['rpc'], description: 'Interface mode', required: true },
    cwd: { type: 'string', description: 'Working directory' },
    model: { type: 'string', description: 'Model id (default: offline)' },
    'allowed-tools': { type: 'string', description: 'Comma-separated tool allow-list' },
    approval: { type: 'enum', options: ['allow', 'deny', 'ask'], description: 'How tools that ask for permission are answered', default: 'allow' },
    sandbox: { type: 'enum', options: ['read-only', 'workspace-write', 'danger-full-access'], description: 'File and shell confinement', default: 'workspace-write' },
    permission: { type: 'string', description: 'Permission rule override Tool=allow|ask|deny (repeatable)' },
  },
  async run({ args, rawArgs }) {
    if (args.mode !== 'rpc') throw new UsageError('--mode must be rpc')
    const logger = createLogger({ level: levelFromEnv(), name: 'rpc' })
    const flags = sessionFlags(args, rawArgs)
    const { runRpc } = await import('../rpc/main.ts')
    await runRpc({
      input: process.stdin,
      output: process.stdout,
      logger,
      ...flags,
      approval: args.approval as 'allow' | 'deny' | 'ask',
      sandbox: args.sandbox as 'read-only' | 'workspace-write' | 'danger-full-access',
    })
  },
})
