// docs/client.md's examples of the `/node` and `/msw` entries against the installed
// @chimera-agent/client with its optional peers (`@agentclientprotocol/sdk`, `msw`) and @types/node.
import { client } from '@agentclientprotocol/sdk'
import { setupServer } from 'msw/node'
import { createChimeraClient, startSession } from '@chimera-agent/client'
import { createChimeraMock } from '@chimera-agent/client/msw'
import { spawnAgent, spawnRpcClient, spawnSeedAgent } from '@chimera-agent/client/node'

export async function rpcExample(): Promise<void> {
  const rpc = spawnRpcClient({ command: ['chimera', 'code', '--mode', 'rpc'], cwd: process.cwd() })
  rpc.on('message', (m) => m.done || process.stdout.write(m.content))
  rpc.on('permission_request', (p) => void rpc.permissionReply(p.request_id, 'allow'))
  await rpc.prompt('!say hello')
  console.log((await rpc.getState()).messages.length)
  await rpc.close()
}

export async function acpExample(): Promise<void> {
  const app = client({ name: 'my-ide' }).onRequest('session/request_permission', async () => ({
    outcome: { outcome: 'selected', optionId: 'allow' },
  }))
  const a = spawnAgent({ command: ['chimera', 'ferret', 'serve'], cwd: process.cwd(), app })
  await a.agent.request('initialize', { protocolVersion: 1, clientCapabilities: {} })
  const { sessionId } = await a.agent.request('session/new', { cwd: process.cwd(), mcpServers: [] })
  console.log(await a.ext.state({ sessionId }))
  await a.close()
}

export async function seedExample(): Promise<void> {
  const seed = spawnSeedAgent({ command: ['chimera', 'ferret', 'serve'] })
  const init = await seed.call('initialize', {})
  console.log(init.protocolVersion, init.serverInfo)
  await seed.close()
}

export async function mswExample(): Promise<void> {
  const mock = createChimeraMock({ baseUrl: 'http://chimera.test', token: 'tok', askPermissions: true })
  const server = setupServer(...mock.handlers)
  server.listen({ onUnhandledRequest: 'error' })
  const chimera = createChimeraClient({ baseUrl: 'http://chimera.test', token: 'tok' })
  const run = await startSession(chimera, { prompt: 'write hello.txt' }, { onPermission: () => 'allow' })
  console.assert(run.events.some((e) => e.type === 'file_edit'))
  server.close()
}
