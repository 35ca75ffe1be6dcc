/**
 * Node built-ins that the start-up path does not need, loaded on first use: a static
 * `import 'node:child_process'` costs every process the module and its dependencies (dgram,
 * net handles) before the first answer, although only a tool call or a language server spawns
 * anything (docs/decisions/0350-start-up-at-the-floor.md). `process.getBuiltinModule` (Node
 * 20.16+, 22.3+) loads a built-in synchronously, so the call sites stay synchronous.
 */
type ChildProcessModule = typeof import('node:child_process')
type HttpModule = typeof import('node:http')
type CryptoModule = typeof import('node:crypto')

/** `node:child_process`, loaded on the first call. */
export const childProcess = (): ChildProcessModule => process.getBuiltinModule('node:child_process')

/**
 * `node:http`, by `process.getBuiltinModule` rather than an ES import: Node 22 and later build an
 * ES-imported built-in's namespace from every export, reading its lazy getters, and `node:http`'s
 * `WebSocket`, `CloseEvent` and `MessageEvent` getters load undici (with webstreams, worker_threads,
 * tls and http2): about 20 ms of CPU on Node 24 before `chimera otter serve` could bind
 * (docs/decisions/0480-the-bind-path-without-node-namespaces.md).
 */
export const nodeHttp = (): HttpModule => process.getBuiltinModule('node:http')

/**
 * `node:crypto`, loaded on the first call: the floor a server's bind is measured against loads no
 * crypto, and nothing `chimera otter serve` does before its first answer needs it (a session id,
 * a token's hash and a TLS key check do; decision 0480). About 2.5 ms of CPU on Node 20 and 24, 4.5
 * as an ES import on Node 24 (its namespace reads the `webcrypto` getter).
 */
export const nodeCrypto = (): CryptoModule => process.getBuiltinModule('node:crypto')

/**
 * A name part that keeps scratch files of one home apart (a lock's temporary file, the home's
 * write probe): the PID and 32 random bits. Not a secret (those files are created exclusively, in
 * the user's own home), so `Math.random` serves and `node:crypto` does not load for it.
 */
export const scratchSuffix = (): string =>
  `${process.pid}-${Math.floor(Math.random() * 2 ** 32)
    .toString(16)
    .padStart(8, '0')}`
