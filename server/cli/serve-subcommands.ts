/** The `status` and `stop` subcommands of `chimera otter serve` and `chimera ferret serve`. */
import { defineCommand } from 'citty'
import type { PidfilePrefix } from '../store/pidfile.ts'
import { ExitStatus } from './args.ts'

export function serveSubCommands(prefix: PidfilePrefix) {
  const status = defineCommand({
    meta: { name: 'status', description: `List background ${prefix} servers (pidfiles under $CHIMERA_HOME/run)` },
    args: {},
    run: async () => {
      const { runStatus } = await import('./serve-control.ts')
      const code = runStatus(prefix)
      if (code) throw new ExitStatus(code)
    },
  })
  const stop = defineCommand({
    meta: {
      name: 'stop',
      description: `Stop background ${prefix} servers: SIGTERM, then SIGKILL after --serve-timeout`,
    },
    args: {
      port: { type: 'string', description: `Stop only the server on this port (${prefix}-<port>.pid)` },
      all: { type: 'boolean', description: `Stop every background ${prefix} server`, default: false },
      'serve-timeout': { type: 'string', description: 'Seconds between SIGTERM and SIGKILL', default: '10' },
    },
    run: async ({ args }) => {
      const { runStop } = await import('./serve-control.ts')
      const code = await runStop(prefix, args)
      if (code) throw new ExitStatus(code)
    },
  })
  return { status, stop }
}
