/**
 * The five LSP tools against the real pyright language server (the devDependency) on a small
 * Python project written at test time, through a real session with the offline model's
 * `!call`: a type error diagnosed and gone after an Edit, a completion, a definition across
 * files, references counted, a rename across files applied and undone. One server per file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, COLD_MS, lspProject, processesIn, type LspProject } from './fixtures/project.ts'

const MATHX = `def add(a: int, b: int) -> int:
    return a + b


total = add(1, 2)
`
const MAIN = `from pkg.mathx import add, total

n: int = add(2, total)
s: str = add(4, 5)
both = [n, s, add(n, 1)]
`
const USE = `import pkg.mathx as mathx

x = mathx.
`

let p: LspProject
beforeAll(async () => {
  p = await lspProject('chimera-lsp-py-', {
    'pyrightconfig.json': '{}\n',
    'pkg/__init__.py': '',
    'pkg/mathx.py': MATHX,
    'main.py': MAIN,
    'use.py': USE,
  })
})
afterAll(async () => {
  const cwd = p?.env.cwd
  await p?.close()
  if (cwd) expect(processesIn(cwd)).toEqual([])
})

describe('LSP tools on a Python project (pyright)', () => {
  it(
    'diagnoses a type error, and the error is gone after an Edit fixes it',
    async () => {
      const [r] = await p.turn(call('lsp_diagnostics', { path: 'main.py' }))
      expect(r?.ok).toBe(true)
      const d = r?.data as { errors: number; diagnostics: { line: number; severity: string; message: string }[] }
      expect(d.errors).toBe(1)
      expect(d.diagnostics.find((x) => x.severity === 'error')).toMatchObject({
        line: 3,
        message: expect.stringContaining('"str"'),
      })

      const [edit, after] = await p.turn(
        `${call('Edit', { path: 'main.py', old_string: 's: str', new_string: 's: int' })}\n${call('lsp_diagnostics', { path: 'main.py' })}`,
      )
      expect(edit?.ok).toBe(true)
      expect(after?.data).toMatchObject({ errors: 0 })
    },
    COLD_MS,
  )

  it('offers completions at a position', async () => {
    const [r] = await p.turn(call('lsp_completion', { path: 'use.py', position: { line: 2, character: 10 } }))
    expect(r?.ok).toBe(true)
    expect((r?.data as { items: { label: string }[] }).items.map((i) => i.label)).toEqual(
      expect.arrayContaining(['add', 'total']),
    )
  })

  it('finds a definition in another file', async () => {
    const [r] = await p.turn(call('lsp_definition', { path: 'main.py', position: { text: 'add', occurrence: 2 } }))
    expect(r?.ok).toBe(true)
    expect((r?.data as { definitions: unknown[] }).definitions).toEqual([
      expect.objectContaining({ path: 'pkg/mathx.py', line: 0, character: 4 }),
    ])
  })

  it('counts references across files', async () => {
    const [r] = await p.turn(call('lsp_references', { path: 'pkg/mathx.py', position: { text: 'add' } }))
    expect(r?.ok).toBe(true)
    // mathx.py: definition + `total = add(…)`; main.py: import + three calls.
    expect(r?.data).toMatchObject({ count: 6, files: 2 })
  })

  it('renames across files and /undo restores them', async () => {
    const before = { mathx: p.file('pkg/mathx.py'), main: p.file('main.py') }
    const [r] = await p.turn(call('lsp_rename', { path: 'pkg/mathx.py', position: { text: 'add' }, new_name: 'plus' }))
    expect(r?.ok).toBe(true)
    expect(r?.data).toMatchObject({
      edits: 6,
      files: expect.arrayContaining([
        { path: 'pkg/mathx.py', edits: 2 },
        { path: 'main.py', edits: 4 },
      ]),
    })
    expect(p.file('pkg/mathx.py')).toBe(before.mathx.replaceAll('add', 'plus'))
    expect(p.file('main.py')).toBe(before.main.replaceAll('add', 'plus'))
    // The server saw the rename: the new name resolves, and the files are clean.
    const [def, diag] = await p.turn(
      `${call('lsp_definition', { path: 'main.py', position: { text: 'plus', occurrence: 2 } })}\n${call('lsp_diagnostics', { path: 'main.py' })}`,
    )
    expect((def?.data as { definitions: unknown[] }).definitions).toEqual([
      expect.objectContaining({ path: 'pkg/mathx.py', line: 0, character: 4 }),
    ])
    expect(diag?.data).toMatchObject({ errors: 0 })
    const undo = await p.session.prompt('/undo 2').done
    expect(undo.output).toMatch(/rewound 2 turns, 2 files restored/)
    expect(p.file('pkg/mathx.py')).toBe(before.mathx)
    expect(p.file('main.py')).toBe(before.main)
  })
})
