/**
 * The registry of language servers: which server handles which file extensions, how to start
 * it, and which files mark a project root. Built in: TypeScript/JavaScript
 * (typescript-language-server, shipped as a dependency of this package), Python (pyright, also
 * shipped), Go (gopls), Rust (rust-analyzer) and Ruby (ruby-lsp or solargraph) — the last three
 * when they are on PATH. `registerLspServer` adds or replaces a server (custom registration);
 * later registrations win over earlier ones for the same extension.
 */
import { accessSync, constants, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { delimiter, dirname, join } from 'node:path'

/** How to start a server process. */
export interface LspCommand {
  command: string
  args: string[]
  /** Sent as `initializationOptions` in `initialize`. */
  initializationOptions?: unknown
}

/** A language server the manager can start. */
export interface LspServerSpec {
  /** Unique id (`typescript`, `pyright`…); a registration with the same id replaces the old. */
  id: string
  /** File extensions it serves, with the dot (`.ts`). */
  extensions: readonly string[]
  /** Files or directories whose presence marks a project root (nearest wins). */
  rootMarkers: readonly string[]
  /** The LSP `languageId` of a file with extension `ext`. */
  languageId(ext: string): string
  /** The command line, or a reason it cannot start (not installed). */
  resolve(): LspCommand | { missing: string }
}

const require = createRequire(import.meta.url)

/** An executable called `name` on PATH, if any. */
export function onPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not here
    }
  }
  return undefined
}

/** The file of bin `bin` of npm package `pkg` resolvable from this module, if installed. */
function packageBin(pkg: string, bin: string): string | undefined {
  try {
    const manifest = require.resolve(`${pkg}/package.json`)
    const json = JSON.parse(readFileSync(manifest, 'utf8')) as { bin?: string | Record<string, string> }
    const rel = typeof json.bin === 'string' ? json.bin : json.bin?.[bin]
    return rel ? join(dirname(manifest), rel) : undefined
  } catch {
    return undefined
  }
}

/** A node script of a shipped package, else the executable on PATH, else why not. */
function nodeOrPath(
  pkg: string,
  bin: string,
  args: string[],
  extra: Omit<LspCommand, 'command' | 'args'> = {},
): LspCommand | { missing: string } {
  const script = packageBin(pkg, bin)
  if (script) return { command: process.execPath, args: [script, ...args], ...extra }
  const exe = onPath(bin)
  if (exe) return { command: exe, args, ...extra }
  return { missing: `${bin} is not installed (npm package ${pkg}, or ${bin} on PATH)` }
}

function pathOnly(
  bins: readonly { bin: string; args: string[]; initializationOptions?: unknown }[],
): () => LspCommand | { missing: string } {
  return () => {
    for (const { bin, args, initializationOptions } of bins) {
      const exe = onPath(bin)
      if (exe) return { command: exe, args, ...(initializationOptions !== undefined ? { initializationOptions } : {}) }
    }
    return { missing: `${bins.map((b) => b.bin).join(' or ')} is not installed (not found on PATH)` }
  }
}

function tsserverPath(): string | undefined {
  try {
    return require.resolve('typescript/lib/tsserver.js')
  } catch {
    return undefined
  }
}

const TS_IDS: Record<string, string> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'typescriptreact',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascriptreact',
}

/** rust-analyzer settings under which it runs no project code (build.rs, proc macros, cargo check). */
export const RUST_NO_CODE_EXECUTION = {
  cargo: { buildScripts: { enable: false } },
  procMacro: { enable: false },
  checkOnSave: false,
} as const

/** The built-in servers, in registration order. */
export const BUILTIN_SERVERS: readonly LspServerSpec[] = [
  {
    id: 'typescript',
    extensions: Object.keys(TS_IDS),
    rootMarkers: ['tsconfig.json', 'jsconfig.json', 'package.json'],
    languageId: (ext) => TS_IDS[ext] ?? 'typescript',
    resolve: () => {
      const tsserver = tsserverPath()
      // No syntax server: it answers navigation before the project has loaded, with the import
      // binding instead of the definition. No typings acquisition: it would reach the network.
      const options = {
        disableAutomaticTypingAcquisition: true,
        tsserver: { useSyntaxServer: 'never', ...(tsserver ? { path: tsserver } : {}) },
      }
      return nodeOrPath('typescript-language-server', 'typescript-language-server', ['--stdio'], {
        initializationOptions: options,
      })
    },
  },
  {
    id: 'pyright',
    extensions: ['.py', '.pyi'],
    rootMarkers: ['pyrightconfig.json', 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'],
    languageId: () => 'python',
    resolve: () => nodeOrPath('pyright', 'pyright-langserver', ['--stdio']),
  },
  {
    id: 'gopls',
    extensions: ['.go'],
    rootMarkers: ['go.work', 'go.mod'],
    languageId: () => 'go',
    resolve: pathOnly([{ bin: 'gopls', args: [] }]),
  },
  {
    id: 'rust-analyzer',
    extensions: ['.rs'],
    rootMarkers: ['Cargo.toml'],
    languageId: () => 'rust',
    // Language servers run outside the Bash sandbox: never let this one execute code the model
    // wrote (build scripts, proc macros, `cargo check` on save).
    resolve: pathOnly([{ bin: 'rust-analyzer', args: [], initializationOptions: RUST_NO_CODE_EXECUTION }]),
  },
  {
    id: 'ruby',
    extensions: ['.rb', '.rake', '.gemspec'],
    rootMarkers: ['Gemfile', '.ruby-version'],
    languageId: () => 'ruby',
    resolve: pathOnly([
      { bin: 'ruby-lsp', args: [] },
      { bin: 'solargraph', args: ['stdio'] },
    ]),
  },
]

/** A set of servers; `LspServers.default` holds the built-ins plus process-wide registrations. */
export class LspServers {
  readonly #specs = new Map<string, LspServerSpec>()

  constructor(specs: readonly LspServerSpec[] = BUILTIN_SERVERS) {
    for (const s of specs) this.register(s)
  }

  /** Add a server, or replace the one with the same id. */
  register(spec: LspServerSpec): this {
    if (!spec.id || !spec.extensions.length) throw new Error('a language server needs an id and at least one extension')
    this.#specs.delete(spec.id)
    this.#specs.set(spec.id, spec)
    return this
  }

  /** The server for a file extension (`.ts`), the latest registration first. */
  forExtension(ext: string): LspServerSpec | undefined {
    const lower = ext.toLowerCase()
    return [...this.#specs.values()].reverse().find((s) => s.extensions.includes(lower))
  }

  list(): LspServerSpec[] {
    return [...this.#specs.values()]
  }
}

/** The process-wide registry the default provider uses. */
export const defaultServers = new LspServers()

/** Register a custom language server for every manager built from the default registry. */
export function registerLspServer(spec: LspServerSpec): void {
  defaultServers.register(spec)
}
