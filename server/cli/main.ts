/**
 * The `chimera` command. Subcommands load lazily so `chimera --help` stays fast. Help and
 * version go to stdout (no colour codes unless stdout is a terminal); usage errors — an
 * unknown command, an unknown option, a bad value — go to stderr as one line with exit code 2,
 * other failures as one line with exit 1. On the stdio transports nothing but protocol frames
 * is ever written to stdout.
 */
import { defineCommand, renderUsage, runCommand, type ArgsDef, type CommandDef } from 'citty'
import { VERSION } from '../version.ts'
import { ExitStatus, UsageError, checkArgs } from './args.ts'
import { setOutput } from './output.ts'
import { subCommandLoaders, subCommandStubs } from './subcommands.ts'
import { startupBootstrapMark, startupMark } from '../startup-trace.ts'

startupBootstrapMark()
startupMark('modules')

const main = defineCommand({
  meta: {
    name: 'chimera',
    version: VERSION,
    description: 'Contract-first agent server: HTTP + SSE, ACP over stdio, JSON-lines RPC',
  },
  subCommands: subCommandLoaders(),
})

const resolveDef = async <T>(v: T | Promise<T> | (() => T | Promise<T>)): Promise<T> =>
  typeof v === 'function' ? (v as () => T | Promise<T>)() : v

interface Target {
  cmd: CommandDef<ArgsDef>
  /** The command path (`otter serve`). */
  path: string[]
  /** The arguments after the command path. */
  rest: string[]
}

/** The deepest subcommand named by the leading positional arguments. */
async function target(rawArgs: string[]): Promise<Target> {
  let cmd: CommandDef<ArgsDef> = main
  const path: string[] = []
  let i = 0
  for (; i < rawArgs.length; i++) {
    const a = rawArgs[i]!
    if (a.startsWith('-')) break
    const subs = await resolveDef(cmd.subCommands)
    const next = subs && Object.hasOwn(subs, a) ? subs[a] : undefined
    if (!next) break
    cmd = await resolveDef(next)
    path.push(a)
  }
  return { cmd, path, rest: rawArgs.slice(i) }
}

const plain = (text: string): string => (process.stdout.isTTY ? text : text.replace(/\u001b\[[0-9;]*m/g, ''))

/** citty names a command after its parent only; the usage line gets the whole path (`chimera otter serve`). */
async function usageText(t: Target): Promise<string> {
  const parent = t.path.length ? { meta: { name: ['chimera', ...t.path.slice(0, -1)].join(' ') } } : undefined
  // The top level lists its subcommands from their descriptions, loading none of them.
  const cmd = t.cmd === main ? { ...main, subCommands: subCommandStubs() } : t.cmd
  return plain(await renderUsage(cmd, parent as CommandDef<ArgsDef> | undefined))
}

async function run(rawArgs: string[]): Promise<number> {
  let t: Target | undefined
  try {
    t = await target(rawArgs)
    startupMark('modules')
    const name = ['chimera', ...t.path].join(' ')
    if (rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0) {
      process.stdout.write(`${await usageText(t)}\n`)
      return 0
    }
    if (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v')) {
      process.stdout.write(`${VERSION}\n`)
      return 0
    }
    if (!t.cmd.run) {
      const next = t.rest.find((a) => !a.startsWith('-'))
      const subs = Object.keys((await resolveDef(t.cmd.subCommands)) ?? {}).join(', ')
      if (next !== undefined)
        throw new UsageError(`unknown command "${[...t.path, next].join(' ')}"; ${name} has: ${subs}`)
      throw new UsageError(`${name}: missing subcommand (${subs})`)
    }
    checkArgs(t.rest, (await resolveDef(t.cmd.args)) ?? {}, name)
    // Run the resolved command itself: citty would run a command's own `run` after one of its
    // subcommands too (`serve` has both: `serve` starts a server, `serve stop` must not).
    await runCommand({ ...t.cmd, subCommands: undefined }, { rawArgs: t.rest })
    // A command may report an outcome through the exit code (`chimera conformance`: 1 when a requirement failed).
    return typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (err) {
    if (err instanceof ExitStatus) return err.code
    const usage = err instanceof UsageError || (err as { name?: string })?.name === 'CLIError'
    if (usage) {
      const help = ['chimera', ...(t?.path ?? []), '--help'].join(' ')
      process.stderr.write(`error: ${(err as Error).message} (see \`${help}\`)\n`)
      return 2
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
}

setOutput((text) => process.stdout.write(text))
process.exitCode = await run(process.argv.slice(2))
