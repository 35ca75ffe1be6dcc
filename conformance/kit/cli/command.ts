/** `chimera conformance`: the kit's runner as a subcommand of the chimera CLI (flags in options.ts). */
import { defineCommand } from 'citty'
import { KIT_ARGS } from './options.ts'
import { execute } from './execute.ts'
import { exitOnSignals } from '../../../server/platform/supervisor.ts'

export default defineCommand({
  meta: {
    name: 'conformance',
    description: 'Run the conformance kit against an ACP agent, an HTTP+SSE server or a JSON-lines RPC process',
  },
  args: KIT_ARGS,
  async run({ args, rawArgs }) {
    // Ctrl-C ends the run through `exit`, which stops every target's process group.
    exitOnSignals()
    process.exitCode = await execute(args, rawArgs, (line) => process.stdout.write(`${line}\n`))
  },
})
