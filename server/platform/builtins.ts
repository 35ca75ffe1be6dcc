/**
 * Node built-ins that the start-up path does not need, loaded on first use: a static
 * `import 'node:child_process'` costs every process the module and its dependencies (dgram,
 * net handles) before the first answer, although only a tool call or a language server spawns
 * anything (docs/decisions/0350-start-up-at-the-floor.md). `process.getBuiltinModule` (Node
 * 20.16+, 22.3+) loads a built-in synchronously, so the call sites stay synchronous.
 */
type ChildProcessModule = typeof import('node:child_process')
type HttpModule = typeof import('node:http')

/** `node:child_process`, loaded on the first call. */
export const childProcess = (): ChildProcessModule => process.getBuiltinModule('node:child_process')

/**
 * `node:http`, by `process.getBuiltinModule` rather than an ES import: Node 22 and later build an
 * ES-imported built-in's namespace from every export, reading its lazy getters, and `node:http`'s
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters load undici (with webstreams, worker_threads,
 * tls and http2): about 20 ms of CPU on Node 24 before `chimera otter serve` could bind
 * (docs/decisions/0480-node-http-without-its-namespace.md).
 */
export const nodeHttp = (): HttpModule => process.getBuiltinModule('node:http')
