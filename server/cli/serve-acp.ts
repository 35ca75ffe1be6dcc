/** Serve ACP on this process's stdin/stdout until stdin closes. */
import type { Logger } from '../log.ts'
import type { AgentName } from '../acp/dialect.ts'

export async function serveAcpStdio(agent: AgentName, version: string, logger: Logger): Promise<void> {
  const { serveAcp } = await import('../acp/server.ts')
  await serveAcp({ agent, version, input: process.stdin, output: process.stdout, logger })
}
