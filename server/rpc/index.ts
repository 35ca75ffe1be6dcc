/**
 * The JSON-lines RPC as a library (docs/rpc.md): `RpcServer` (framing, validation,
 * acknowledgements) and `createRpcHandlers` (the commands over one agent-core session), or
 * `runRpc` for both wired to a session, as `chimera code --mode rpc` does.
 */
export {
  RpcServer,
  RpcCommandError,
  type RpcHandlers,
  type RpcContext,
  type RpcServerOptions,
  type Command,
} from './rpc-server.ts'
export { createRpcHandlers } from './handlers.ts'
export { EventPump, runRpc, type RpcMainOptions } from './run-rpc.ts'
export { toRpcMessages } from './event-map.ts'
