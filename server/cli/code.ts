/** `chimera code --mode rpc`: JSON-lines RPC over stdin/stdout (docs/rpc.md). */
import { defineCommand } from 'citty'
import { buildModelRegistry } from '../providers/registry.ts'
import { isSessionId } from '../store/paths.ts'
import { createLogger, levelFromEnv } from '../log.ts'
import { eventLogProblem, startAgentProcess } from './agent-process.ts'
import { UsageError } from './args.ts'
import { readAgentFlag, sessionArgs, sessionFlags, sessionModel } from './session-flags.ts'
import { chimeraHome } from '../store/paths.ts'
import { startupMark } from '../startup-trace.ts'
import { ChimeraError } from '../errors.ts'

export default defineCommand({
  meta: { name: 'code', description: 'Drive an agent session headlessly (--mode rpc: JSON lines on stdin/stdout)' },
  args: {
    mode: { type: 'enum', options: ['rpc'], description: 'Interface mode', required: true },
    session: { type: 'string', description: 'Continue this persisted session (its id) instead of starting a new one' },
    ...sessionArgs('allow', 'the parent process driving the RPC is the user'),
  },
  async run({ args, rawArgs }) {
    if (args.mode !== 'rpc') throw new UsageError('--mode must be rpc')
    if (args.session !== undefined && !isSessionId(args.session))
      throw new UsageError(`--session: ${JSON.stringify(args.session)} is not a session id`)
    const logger = createLogger({ level: levelFromEnv(), name: 'rpc' })
    const agent = await readAgentFlag(args)
    const models = buildModelRegistry(process.env, { model: sessionModel(args, agent), logger })
    const defaults = sessionFlags(args, rawArgs, models, agent)
    // The RPC engine loads while the write probe's file system calls run.
    const probing = eventLogProblem(chimeraHome())
    const engine = import('../rpc/run-rpc.ts')
    engine.catch(() => {})
    const problem = await probing
    if (problem) throw new Error(problem)
    const proc = await startAgentProcess('otter', { ...defaults, models }, logger)
    startupMark('store')
    const { runRpc } = await engine
    startupMark('modules')
    let session
    try {
      session = args.session ? await proc.manager.get(args.session) : await proc.manager.create()
    } catch (err) {
      if (ChimeraError.is(err, 'session_not_found')) throw new UsageError(`--session: ${err.message}`)
      throw err
    }
    proc.announce()
    await runRpc({
      input: process.stdin,
      output: process.stdout,
      logger,
      manager: proc.manager,
      session,
      signal: proc.signal,
    })
    await proc.shutdown('input ended')
  },
})
