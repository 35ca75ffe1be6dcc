/**
 * The five LSP tools against the real typescript-language-server (the devDependency) on a small
 * project written at test time, driven through a real session with the offline model's
 * `!call`: a type error diagnosed and gone after an Edit, a completion, a definition across
 * files, references counted, a rename across files applied (file_edit events) and undone. One
 * session, so one server, for the whole file.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ofType, within } from '../core/fixtures/harness.ts'
import { call, COLD_MS, lspProject, processesIn, type LspProject } from './fixtures/project.ts'

const MATH = `export function add(a: number, b: number): number {
  return a + b
}
export const total = add(1, 2)
`
const MAIN = `import { add, total } from './math'
const n: number = add(2, total)
const s: string = add(4, 5)
export const both = [n, s, add(n, 1)]
`
const USE = `import * as math from './math'
export const x = math.
`

let p: LspProject
beforeAll(async () => {
  const tsconfig = JSON.stringify({
    compilerOptions: { strict: true, target: 'es2020', module: 'commonjs', noEmit: true },
    include: ['src'],
  })
  p = await lspProject('chimera-lsp-ts-', {
    'tsconfig.json': tsconfig,
    'src/math.ts': MATH,
    'src/main.ts': MAIN,
    'src/use.ts': USE,
  })
})
afterAll(async () => {
  const cwd = p?.env.cwd
  await p?.close()
  if (cwd) expect(processesIn(cwd)).toEqual([])
})

const turn = (text: string) => p.turn(text)
const file = (rel: string) => p.file(rel)

describe('LSP tools on a TypeScript project (typescript-language-server)', () => {
  it('offers the five tools, and starts no server before one is used', () => {
    const names = p.session.availableTools().map((t) => t.name)
    expect(names).toEqual(
      expect.arrayContaining(['lsp_diagnostics', 'lsp_completion', 'lsp_rename', 'lsp_definition', 'lsp_references']),
    )
    expect(processesIn(p.env.cwd)).toEqual([])
  })

  it(
    'diagnoses a type error, and the error is gone after an Edit fixes it',
    async () => {
      const [r] = await turn(call('lsp_diagnostics', { path: 'src/main.ts' }))
      expect(r?.ok).toBe(true)
      const d = r?.data as { errors: number; diagnostics: { line: number; code: unknown; severity: string }[] }
      expect(d.errors).toBe(1)
      expect(d.diagnostics[0]).toMatchObject({ line: 2, code: 2322, severity: 'error' })
      expect(r?.output).toContain('src/main.ts:2:6 error [typescript 2322]')

      const [edit, after] = await turn(
        `${call('Edit', { path: 'src/main.ts', old_string: 'const s: string', new_string: 'const s: number' })}\n${call('lsp_diagnostics', { path: join(p.env.cwd, 'src/main.ts') })}`,
      )
      expect(edit?.ok).toBe(true)
      expect(after?.ok).toBe(true)
      expect(after?.data).toMatchObject({ count: 0, errors: 0 })
      expect(after?.output).toBe('No diagnostics in src/main.ts')
    },
    COLD_MS,
  )

  it('offers completions at a position', async () => {
    const [r] = await turn(call('lsp_completion', { path: 'src/use.ts', position: { line: 1, character: 22 } }))
    expect(r?.ok).toBe(true)
    const labels = (r?.data as { items: { label: string }[] }).items.map((i) => i.label)
    expect(labels).toEqual(expect.arrayContaining(['add', 'total']))
  })

  it('finds a definition in another file, from an anchor and from a file:// URI', async () => {
    const [byAnchor, byUri] = await turn(
      `${call('lsp_definition', { path: 'src/main.ts', position: { text: 'add', occurrence: 2 } })}\n${call('lsp_definition', { path: `file://${join(p.env.cwd, 'src/main.ts')}`, position: { line: 1, character: 19 } })}`,
    )
    for (const r of [byAnchor, byUri]) {
      expect(r?.ok).toBe(true)
      expect((r?.data as { definitions: unknown[] }).definitions).toEqual([
        expect.objectContaining({ path: 'src/math.ts', line: 0, character: 16 }),
      ])
    }
    expect(byAnchor?.output).toContain('src/math.ts:0:16')
  })

  it('counts references across files', async () => {
    const [r] = await turn(call('lsp_references', { path: 'src/math.ts', position: { text: 'add' } }))
    expect(r?.ok).toBe(true)
    // math.ts: declaration + `total = add(…)`; main.ts: import + three calls.
    const d = r?.data as { count: number; files: number; references: { path: string }[] }
    expect(d.count).toBe(6)
    expect(d.files).toBe(2)
    expect(d.references.filter((x) => x.path === 'src/main.ts')).toHaveLength(4)
    expect(r?.output).toMatch(/^6 references in 2 files/)
  })

  it('renames across files through the edit path (file_edit events), then /undo restores both files', async () => {
    const before = { math: file('src/math.ts'), main: file('src/main.ts') }
    const seq = p.session.lastSeq
    const [r] = await turn(call('lsp_rename', { path: 'src/math.ts', position: { text: 'add' }, new_name: 'sum' }))
    expect(r?.ok).toBe(true)
    expect(r?.data).toMatchObject({
      new_name: 'sum',
      edits: 6,
      files: expect.arrayContaining([
        { path: 'src/math.ts', edits: 2 },
        { path: 'src/main.ts', edits: 4 },
      ]),
    })
    expect(file('src/math.ts')).toBe(before.math.replaceAll('add', 'sum'))
    expect(file('src/main.ts')).toBe(before.main.replaceAll('add', 'sum'))
    const edits = ofType(await p.session.events(seq), 'file_edit')
      .map((e) => e.data.path)
      .sort()
    expect(edits).toEqual(['src/main.ts', 'src/math.ts'])

    // The server saw the rename: the new name is defined where the old one was.
    const [def] = await turn(call('lsp_definition', { path: 'src/main.ts', position: { text: 'sum', occurrence: 2 } }))
    expect((def?.data as { definitions: unknown[] }).definitions).toEqual([
      expect.objectContaining({ path: 'src/math.ts', line: 0, character: 16 }),
    ])

    const undo = await within(p.session.prompt('/undo 2').done, 10_000, '/undo')
    expect(undo.output).toMatch(/rewound 2 turns, 2 files restored/)
    expect(file('src/math.ts')).toBe(before.math)
    expect(file('src/main.ts')).toBe(before.main)
  })
})
