/**
 * The ACP client side against the real agent (`chimera ferret serve`, the bundled CLI): the
 * official SDK's client app connected by spawnAgent(), our typed extension calls (params checked
 * before sending, the agent's errors passed through), and the typed seed-dialect client.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { AcpRemoteError, spawnAgent, spawnSeedAgent, type AgentConnection, type SeedAcpClient } from './acp.ts'

const dirs = tempDirs()
const open: (AgentConnection | SeedAcpClient)[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()))
  dirs.cleanup()
})

const launch = () => ({
  command: [process.execPath, CLI_BUNDLE, 'ferret', 'serve'],
  cwd: dirs.make('chimera-acp-client-'),
  env: { ...process.env, CHIMERA_HOME: dirs.make('chimera-acp-home-') },
})

describe('spawnAgent: the SDK client app over chimera ferret serve', () => {
  it('initializes on the v1 wire, passes the agent’s errors through typed calls, and closes with exit 0', async () => {
    const a = spawnAgent(launch())
    open.push(a)
    const init = await a.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} })
    expect(init).toMatchObject({ protocolVersion: 1, agentInfo: { name: 'chimera-ferret' } })
    // Params outside the spec never leave the client.
    await expect(a.ext.setSandbox({ sessionId: 's-1', mode: 'everything' as never })).rejects.toThrow(
      /_ferret\/session\/setSandbox: mode/,
    )
    // An error answer reaches the caller as the SDK's RequestError with the agent's code
    // (the extensions are served: an unknown session is Resource not found).
    const err = await a.ext.state({ sessionId: 'no-such-session' }).catch((e: unknown) => e)
    expect(err).toMatchObject({ code: -32002 })
    // And a typed call's result comes back checked against the generated validator.
    const { sessionId } = await a.agent.request('session/new', { cwd: launch().cwd, mcpServers: [] })
    expect(await a.ext.state({ sessionId })).toMatchObject({ sessionId, mode: 'build', status: 'idle', messages: [] })
    expect(await a.ext.bridgeStatus({ sessionId })).toMatchObject({
      attached: false,
      reason: expect.stringMatching(/no cloud bridge is configured/),
    })
    open.splice(open.indexOf(a), 1)
    expect(await a.close()).toBe(0)
  })
})

describe('SeedAcpClient: the seed dialect, typed from its OpenRPC', () => {
  it('initializes with the ferret capability block and maps error answers to AcpRemoteError', async () => {
    const seed = spawnSeedAgent(launch())
    open.push(seed)
    const init = await seed.call('initialize', {})
    expect(init).toMatchObject({
      protocolVersion: '0.2',
      serverInfo: { name: 'ferret-acp' },
      capabilities: { sandbox: true, bridge: true },
    })
    // The session methods are served: an unknown session is the seed's SessionNotFound (docs/client.md).
    const err = await seed.call('session/load', { sessionId: 'ferret-no-such-session' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AcpRemoteError)
    expect((err as AcpRemoteError).code).toBe(-32000)
    expect((err as AcpRemoteError).data).toMatchObject({ name: 'SessionNotFound' })
    open.splice(open.indexOf(seed), 1)
    expect(await seed.close()).toBe(0)
  })
})
