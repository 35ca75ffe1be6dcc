/**
 * `chimera/client/node`: the parts of the SDK that need Node — the JSON-lines RPC client over a
 * child process (and, with the ACP agent, spawning agents). Everything in `chimera/client` is
 * re-exported too, so Node programs need one import.
 */
export * from '../index.ts'
export { RpcClient, spawnRpcClient, type RpcCallOptions, type RpcClientOptions, type RpcCommand, type RpcEvent, type RpcEventType, type RpcResponse, type StateResponse } from './rpc-client.ts'
