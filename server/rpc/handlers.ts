/**
 * The command handlers of `chimera code --mode rpc` (the document's `RpcHandler`). This build
 * answers `get_state`; the commands that drive the agent core land with it.
 */
import type { RpcHandlers } from './server.ts'

export interface RpcSessionView {
  model: string
  messages(): { role: 'user' | 'assistant' | 'tool' | 'system'; content: string }[]
}

export function createRpcHandlers(session: RpcSessionView): RpcHandlers {
  return {
    get_state: async (cmd, ctx) => {
      await ctx.emit({ type: 'state', id: cmd.id ?? null, messages: session.messages(), model: session.model })
    },
  }
}
