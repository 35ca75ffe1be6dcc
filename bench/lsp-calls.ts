// Cold and warm LSP tool calls against the real servers (typescript-language-server, pyright)
// on small projects written to a temporary directory. Cold: the first lsp_definition of a fresh
// manager (server start, initialize, project load, the request). Warm: the median of BENCH_RUNS
// further calls of each tool on the running server (lsp_diagnostics of an unchanged file answers
// from the last publish; `lsp_diagnostics/edit` changes the file first, so it waits for the
// server's fresh publish and the 300 ms quiet spell). Baseline measured in the same run: a Grep
// tool call for the same symbol (ripgrep process), so the figures read as ratios on any machine.
// Prints; asserts nothing. Run: node_modules/.bin/tsx bench/lsp-calls.ts
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { LspManager } from '../server/lsp/manager.ts'
import { runTool, builtinTools } from '../server/tools/registry.ts'
import { lspTools } from '../server/tools/lsp.ts'
import { recordingContext } from '../server/tools/fixtures/workspace.ts'

const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const now = (): number => Number(process.hrtime.bigint()) / 1e6
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`

interface Project {
  lang: string
  files: Record<string, string>
  file: string
  other: string
  symbol: string
}

const projects: Project[] = [
  {
    lang: 'TypeScript (typescript-language-server)',
    files: {
      'tsconfig.json': '{"compilerOptions":{"strict":true},"include":["src"]}',
      'src/math.ts': 'export function add(a: number, b: number): number {\n  return a + b\n}\n',
      'src/main.ts': "import { add } from './math'\nexport const n = add(1, 2) + add(3, 4)\n",
    },
    file: 'src/main.ts',
    other: 'src/math.ts',
    symbol: 'add',
  },
  {
    lang: 'Python (pyright)',
    files: {
      'pyrightconfig.json': '{}',
      'mathx.py': 'def add(a: int, b: int) -> int:\n    return a + b\n',
      'main.py': 'from mathx import add\n\nn = add(1, 2) + add(3, 4)\n',
    },
    file: 'main.py',
    other: 'mathx.py',
    symbol: 'add',
  },
]

async function timed(fn: () => Promise<{ ok: boolean; error?: string }>): Promise<number> {
  const t = now()
  const r = await fn()
  const ms = now() - t
  if (!r.ok) throw new Error(`call failed: ${r.error}`)
  return ms
}

for (const p of projects) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-bench-lsp-')))
  for (const [rel, text] of Object.entries(p.files)) {
    mkdirSync(dirname(join(base, rel)), { recursive: true })
    writeFileSync(join(base, rel), text)
  }
  const manager = new LspManager({ cwd: base })
  const tools = new Map([...builtinTools(), ...lspTools(() => manager).map((t) => [t.name, t] as const)])
  const ctx = recordingContext(base)
  const call = (name: string, args: unknown) => () => runTool(name, args, ctx, { tools })
  const pos = { text: p.symbol, occurrence: 2 }
  try {
    const cold = await timed(call('lsp_definition', { path: p.file, position: pos }))
    const warm: Record<string, number[]> = {
      lsp_definition: [],
      lsp_references: [],
      lsp_completion: [],
      lsp_diagnostics: [],
      'lsp_diagnostics/edit': [],
      Grep: [],
    }
    for (let i = 0; i < RUNS; i++) {
      warm.lsp_definition!.push(await timed(call('lsp_definition', { path: p.file, position: pos })))
      warm.lsp_references!.push(await timed(call('lsp_references', { path: p.other, position: { text: p.symbol } })))
      warm.lsp_completion!.push(await timed(call('lsp_completion', { path: p.file, position: pos })))
      warm.lsp_diagnostics!.push(await timed(call('lsp_diagnostics', { path: p.file })))
      // After a change on disk: didChange, then the server's fresh diagnostics.
      writeFileSync(join(base, p.file), `${p.files[p.file]}${p.lang.startsWith('Python') ? '#' : '//'} edit ${i}\n`)
      warm['lsp_diagnostics/edit']!.push(await timed(call('lsp_diagnostics', { path: p.file })))
      warm.Grep!.push(await timed(call('Grep', { pattern: `\\b${p.symbol}\\b` })))
    }
    const grep = median(warm.Grep!)
    console.log(`\n${p.lang}: ${RUNS} warm runs each`)
    console.log(`  cold first lsp_definition  ${fmt(cold)}  (${(cold / grep).toFixed(0)}x a warm Grep)`)
    for (const [name, xs] of Object.entries(warm)) {
      console.log(
        `  warm ${name.padEnd(20)} median ${fmt(median(xs)).padStart(9)}  ${name === 'Grep' ? '(baseline)' : `${(median(xs) / grep).toFixed(2)}x Grep`}`,
      )
    }
    console.log(`  cold / warm lsp_definition: ${(cold / median(warm.lsp_definition!)).toFixed(0)}x`)
  } finally {
    await manager.shutdown()
    rmSync(base, { recursive: true, force: true })
  }
}
