/**
 * bin/chimera-conformance.mjs: the kit on its own, so a third party runs it without our server.
 * Same flags as `chimera conformance`; exit 0 when nothing unexpected happened, 1 when a
 * requirement failed (or a listed expected failure passed), 2 on a usage error.
 */
import { parseArgs, renderUsage } from 'citty'
import { UsageError, checkArgs } from '../../../server/cli/args.ts'
import command from './command.ts'
import { KIT_ARGS } from './options.ts'
import { execute, type KitFlags } from './execute.ts'
import { exitOnSignals } from '../../../server/platform/supervisor.ts'

async function main(rawArgs: string[]): Promise<number> {
  try {
    if (rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0) {
      const meta = await (typeof command.meta === 'function' ? command.meta() : command.meta)
      const usage = (await renderUsage({ ...command, meta: { ...meta, name: 'chimera-conformance' } })).replace(
        /\u001b\[[0-9;]*m/g,
        '',
      )
      process.stdout.write(`${usage}\n`)
      return 0
    }
    checkArgs(rawArgs, KIT_ARGS, 'chimera-conformance')
    const args = parseArgs(rawArgs, KIT_ARGS) as KitFlags
    return await execute(args, rawArgs, (line) => process.stdout.write(`${line}\n`))
  } catch (err) {
    if (err instanceof UsageError || (err as { name?: string })?.name === 'CLIError') {
      process.stderr.write(`error: ${(err as Error).message} (see \`chimera-conformance --help\`)\n`)
      return 2
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

// Ctrl-C ends the run through `exit`, which stops every target's process group.
exitOnSignals()
process.exitCode = await main(process.argv.slice(2))
