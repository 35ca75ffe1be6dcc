/**
 * `@chimera-agent/client/node`: the parts of the SDK that need Node — the JSON-lines RPC client over a
 * child process, and the ACP client side (spawnAgent over the official SDK with typed extension
 * calls, the typed seed-dialect client). Everything in `@chimera-agent/client` is re-exported too, so
 * Node programs need one import.
 */
export * from '../index.ts'
export {
  AcpRemoteError,
  callExtension,
  chimeraExtensions,
  SeedAcpClient,
  spawnAgent,
  spawnSeedAgent,
  type AgentConnection,
  type ChimeraExtensions,
  type ExtParams,
  type ExtResult,
  type SeedAgentNotification,
  type SeedAgentRequest,
  type SeedNotification,
  type SeedParams,
  type SeedRequest,
  type SeedResult,
  type SpawnAgentOptions,
  type SpawnOptions,
} from './acp.ts'
export { connectRemoteAgent, type RemoteAgentConnection, type RemoteAgentOptions } from './acp-remote.ts'
export {
  RpcClient,
  spawnRpcClient,
  type RpcCallOptions,
  type RpcClientOptions,
  type RpcCommand,
  type RpcEvent,
  type RpcEventType,
  type RpcResponse,
  type StateResponse,
} from './rpc-client.ts'
