/**
 * Node built-ins that the start-up path does not need, loaded on first use: a static
 * `import 'node:child_process'` costs every process the module and its dependencies (dgram,
 * net handles) before the first answer, although only a tool call or a language server spawns
 * anything (docs/decisions/0350-start-up-at-the-floor.md). `process.getBuiltinModule` (Node
 * 20.16+, 22.3+) loads a built-in synchronously, so the call sites stay synchronous.
 */
type ChildProcessModule = typeof import('node:child_process')

/** `node:child_process`, loaded on the first call. */
export const childProcess = (): ChildProcessModule => process.getBuiltinModule('node:child_process')
