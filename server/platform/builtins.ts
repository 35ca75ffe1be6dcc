/**
 * Node built-ins that the start-up path does not need, loaded on first use: a static
 * `import 'node:child_process'` costs every process the module and its dependencies (dgram,
 * net handles) before the first answer, although only a tool call or a language server spawns
 * anything (docs/decisions/0350-start-up-at-the-floor.md). The same holds for `node:crypto`
 * (hashes and token comparisons of the HTTP server, content hashes of snapshots: some 35 internal
 * modules, 2.5 ms of CPU on Node 20 and 4 ms on Node 24), `node:zlib` (the segment's CRC-32) and
 * `node:util` (an ESM import of it makes Node 24 build its whole namespace, worker_threads
 * included) (docs/decisions/0465-built-ins-after-the-answer.md). `process.getBuiltinModule`
 * (Node 20.16+, 22.3+) loads a built-in synchronously, so the call sites stay synchronous.
 */
type ChildProcessModule = typeof import('node:child_process')
type CryptoModule = typeof import('node:crypto')
type ZlibModule = typeof import('node:zlib')
type UtilModule = typeof import('node:util')
type HttpModule = typeof import('node:http')

/** `node:child_process`, loaded on the first call. */
export const childProcess = (): ChildProcessModule => process.getBuiltinModule('node:child_process')

/** `node:crypto`, loaded on the first call. Random ids and bytes: `./random.ts`. */
export const crypto = (): CryptoModule => process.getBuiltinModule('node:crypto')

/** `node:zlib`, loaded on the first call. */
export const zlib = (): ZlibModule => process.getBuiltinModule('node:zlib')

/** `node:util`, loaded on the first call (its CommonJS object, not an ESM namespace). */
export const util = (): UtilModule => process.getBuiltinModule('node:util')

/**
 * `node:http`, by `process.getBuiltinModule` rather than an ES import: Node 22 and later build an
 * ES-imported built-in's namespace from every export, reading its lazy getters, and `node:http`'s
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters load undici (with webstreams, worker_threads,
 * tls and http2): about 20 ms of CPU on Node 24 before `chimera otter serve` could bind
 * (docs/decisions/0480-the-bind-path-without-node-namespaces.md).
 */
export const http = (): HttpModule => process.getBuiltinModule('node:http')
