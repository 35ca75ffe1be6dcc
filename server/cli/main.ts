/**
 * The `chimera` command. Subcommands load lazily so `chimera --help` stays fast. Help and
 * version go to stdout; usage errors go to stderr with exit code 2, other failures exit 1.
 * On the stdio transports nothing but protocol frames is ever written to stdout.
 */
import { defineCommand, renderUsage, runCommand, type CommandDef } from 'citty'
import { VERSION } from '../version.ts'
import { UsageError } from './args.ts'

const main = defineCommand({
  meta: { name: 'chimera', version: VERSION, description: 'Contract-first agent server: HTTP + SSE, ACP over stdio, JSON-lines RPC' },
  subCommands: {
    otter: () => import('./otter.ts').then((m) => m.default),
    ferret: () => import('./ferret.ts').then((m) => m.default),
    code: () => import('./code.ts').then((m) => m.default),
  },
})

const resolve = async <T>(v: T | Promise<T> | (() => T | Promise<T>)): Promise<T> => (typeof v === 'function' ? (v as () => T | Promise<T>)() : v)

/** The deepest subcommand named by the leading positional arguments, with its parent. */
async function target(rawArgs: string[]): Promise<[CommandDef<any>, CommandDef<any> | undefined]> {
  let cmd: CommandDef<any> = main
  let parent: CommandDef<any> | undefined
  for (const a of rawArgs) {
    if (a.startsWith('-')) break
    const subs = await resolve(cmd.subCommands)
    const next = subs?.[a]
    if (!next) break
    parent = cmd
    cmd = await resolve(next)
  }
  return [cmd, parent]
}

async function run(rawArgs: string[]): Promise<number> {
  if (rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0) {
    process.stdout.write(`${await renderUsage(...(await target(rawArgs)))}\n`)
    return 0
  }
  if (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v')) {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  try {
    const [cmd] = await target(rawArgs)
    if (!cmd.run) throw new UsageError(`missing subcommand`)
    await runCommand(main, { rawArgs })
    return 0
  } catch (err) {
    const usage = err instanceof UsageError || (err as { name?: string })?.name === 'CLIError'
    if (usage) {
      process.stderr.write(`${await renderUsage(...(await target(rawArgs)))}\n\nerror: ${(err as Error).message}\n`)
      return 2
    }
    process.stderr.write(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    return 1
  }
}

process.exitCode = await run(process.argv.slice(2))
