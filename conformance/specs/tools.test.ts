/** The tool contracts (specs/tools/tools.yaml): valid JSON Schemas, and validators that agree with them. */
import Ajv2020 from 'ajv/dist/2020.js'
import { describe, expect, it } from 'vitest'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: true, allErrors: true })

describe('tool contracts', () => {
  for (const [name, spec] of Object.entries(toolSpecs)) {
    it(`${name}: input_schema compiles under JSON Schema 2020-12 (strict) and is an object schema`, () => {
      expect(spec.inputSchema.type).toBe('object')
      expect(() => ajv.compile(spec.inputSchema)).not.toThrow()
    })
  }

  it('generated validators and the JSON Schema agree on samples', () => {
    const samples: [keyof typeof toolSpecs, unknown, boolean][] = [
      ['Read', { path: 'a.txt' }, true],
      ['Read', { path: 'a.txt', offset: 0 }, false],
      ['Read', { file: 'a.txt' }, false],
      ['Edit', { path: 'a', old_string: 'x', new_string: 'y' }, true],
      ['Edit', { path: 'a', old_string: '', new_string: 'y' }, false],
      ['Bash', { command: 'ls', timeout_ms: 10 }, true],
      ['Bash', { command: 'ls', timeout_ms: 'soon' }, false],
      ['list_files', {}, true],
      ['Grep', { pattern: 'x', extra: 1 }, false],
      [
        'update_plan',
        {
          entries: [
            { content: 'a', status: 'pending' },
            { content: 'b', status: 'completed', priority: 'high' },
          ],
        },
        true,
      ],
      ['update_plan', { entries: [] }, true],
      ['update_plan', { entries: [{ content: 'a', status: 'done' }] }, false],
      ['update_plan', { entries: [{ content: '', status: 'pending' }] }, false],
      ['update_plan', { entries: [{ content: 'a', status: 'pending', priority: 'urgent' }] }, false],
    ]
    for (const [tool, args, ok] of samples) {
      const schema = ajv.compile(toolSpecs[tool].inputSchema)
      expect([tool, schema(args)]).toEqual([tool, ok])
      expect([tool, toolSpecs[tool].params.safeParse(args).success]).toEqual([tool, ok])
    }
  })

  it('read-only tools default to allow; tools that change files or run commands default to ask', () => {
    const perms = Object.fromEntries(Object.entries(toolSpecs).map(([n, s]) => [n, s.permission]))
    expect(perms).toEqual({
      Read: 'allow',
      Write: 'ask',
      Edit: 'ask',
      Bash: 'ask',
      Grep: 'allow',
      Glob: 'allow',
      list_files: 'allow',
      update_plan: 'allow',
      open_file: 'allow',
      lsp_diagnostics: 'allow',
      lsp_completion: 'allow',
      lsp_rename: 'ask',
      lsp_definition: 'allow',
      lsp_references: 'allow',
    })
  })
})
