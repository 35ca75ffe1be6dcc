/**
 * The `chimera-model-double` bin of the conformance kit's package: `chimera model-double` without
 * the server (same flags; its URL on stderr, serves until SIGINT/SIGTERM). Exit 2 on a usage error.
 */
import { parseArgs, renderUsage, type ArgsDef } from 'citty'
import { UsageError, checkArgs } from '../../server/cli/args.ts'
import command from './command.ts'

async function main(rawArgs: string[]): Promise<number> {
  const args = command.args as ArgsDef
  try {
    if (rawArgs.includes('--help') || rawArgs.includes('-h')) {
      const meta = await (typeof command.meta === 'function' ? command.meta() : command.meta)
      const usage = (await renderUsage({ ...command, meta: { ...meta, name: 'chimera-model-double' } })).replace(
        /\u001b\[[0-9;]*m/g,
        '',
      )
      process.stdout.write(`${usage}\n`)
      return 0
    }
    checkArgs(rawArgs, args, 'chimera-model-double')
    await command.run?.({ rawArgs, args: parseArgs(rawArgs, args), cmd: command } as never)
    return 0
  } catch (err) {
    if (err instanceof UsageError || (err as { name?: string })?.name === 'CLIError') {
      process.stderr.write(`error: ${(err as Error).message} (see \`chimera-model-double --help\`)\n`)
      return 2
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

process.exitCode = await main(process.argv.slice(2))
