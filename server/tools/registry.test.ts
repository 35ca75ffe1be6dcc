/**
 * The registry: the eight built-ins, unknown and disallowed tools, argument validation errors,
 * defaults applied, exceptions turned into failures, `GET /tools` descriptors and allow-list
 * parsing.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { toolSpecs } from '../../generated/tools/tools.gen.ts'
import { formatIssues } from '../../client/wire/issues.ts'
import { LSP_TOOL_NAMES, lspTools } from './lsp.ts'
import { builtinTools, parseAllowedTools, runTool, TOOL_NAMES, toolDescriptors } from './registry.ts'
import { recordingContext, tempWorkspace, type TempWorkspace } from './fixtures/workspace.ts'
import type { Tool } from './types.ts'

let ws: TempWorkspace
beforeEach(() => {
  ws = tempWorkspace()
  ws.write({ 'f.txt': 'one\ntwo\n' })
})
afterEach(() => ws.cleanup())

describe('builtinTools', () => {
  it('has exactly the tools of the spec (the LSP tools apart: they join when LSP is configured), each under its own name', () => {
    const tools = builtinTools()
    const lsp = lspTools()
    expect([...tools.keys(), ...lsp.map((t) => t.name)].sort()).toEqual(Object.keys(toolSpecs).sort())
    for (const [name, tool] of tools) expect(tool.name).toBe(name)
    expect(TOOL_NAMES).toEqual([
      'Read',
      'Write',
      'Edit',
      'Bash',
      'Grep',
      'Glob',
      'list_files',
      'update_plan',
      'open_file',
      ...LSP_TOOL_NAMES,
    ])
  })
})

describe('runTool', () => {
  it('runs a tool with validated arguments', async () => {
    const r = await runTool('Read', { path: 'f.txt' }, recordingContext(ws.cwd))
    expect(r).toMatchObject({ ok: true, output: '     1\tone\n     2\ttwo' })
  })

  it('applies schema defaults (Edit replace_all=false)', async () => {
    ws.write({ 'g.txt': 'x x' })
    const r = await runTool('Edit', { path: 'g.txt', old_string: 'x', new_string: 'y' }, recordingContext(ws.cwd))
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining('occurs 2 times') })
  })

  it('rejects an unknown tool', async () => {
    expect(await runTool('Frobnicate', {}, recordingContext(ws.cwd))).toEqual({
      ok: false,
      error: 'unknown tool "Frobnicate"',
    })
    for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__', 'valueOf']) {
      expect(await runTool(name, {}, recordingContext(ws.cwd))).toEqual({ ok: false, error: `unknown tool "${name}"` })
    }
  })

  it('rejects a tool outside the allowed list', async () => {
    const r = await runTool('Write', { path: 'x', content: '' }, recordingContext(ws.cwd), {
      allowed: ['Read', 'Grep'],
    })
    expect(r).toEqual({ ok: false, error: 'tool "Write" is not allowed in this session (allowed: Read, Grep)' })
    expect((await runTool('Read', { path: 'f.txt' }, recordingContext(ws.cwd), { allowed: ['Read'] })).ok).toBe(true)
  })

  it('rejects malformed arguments with path: message details', async () => {
    const ctx = recordingContext(ws.cwd)
    const missing = await runTool('Read', {}, ctx)
    expect(missing.ok).toBe(false)
    if (!missing.ok) expect(missing.error).toMatch(/^invalid arguments for Read: path: /)
    const wrongType = await runTool('Bash', { command: 'ls', timeout_ms: 'soon' }, ctx)
    if (!wrongType.ok) expect(wrongType.error).toMatch(/^invalid arguments for Bash: timeout_ms: /)
    expect(wrongType.ok).toBe(false)
    const extra = await runTool('Read', { path: 'f.txt', bogus: 1 }, ctx)
    expect(extra.ok).toBe(false)
    if (!extra.ok) expect(extra.error).toMatch(/^invalid arguments for Read: \(root\): .*bogus/)
    const notObject = await runTool('Grep', 'needle', ctx)
    expect(notObject.ok).toBe(false)
    const nulls = await runTool('list_files', null, ctx)
    expect(nulls.ok).toBe(true)
    expect(readFileSync(join(ws.cwd, 'f.txt'), 'utf8')).toBe('one\ntwo\n')
  })

  it('turns an exception inside a tool into a failure', async () => {
    const thrower: Tool = {
      name: 'Read',
      permissionKey: () => '',
      run: async () => {
        throw new Error('boom')
      },
    }
    const tools = new Map([['Read', thrower]])
    expect(await runTool('Read', { path: 'f.txt' }, recordingContext(ws.cwd), { tools })).toEqual({
      ok: false,
      error: 'Read failed: boom',
    })
  })

  it('reports a sandbox violation through the context', async () => {
    const ctx = recordingContext(ws.cwd)
    const r = await runTool('Read', { path: '../outside/nothing' }, ctx)
    expect(r.ok).toBe(false)
    expect(ctx.violations).toHaveLength(1)
  })
})

describe('toolDescriptors', () => {
  it('gives name, description and input_schema for GET /tools', () => {
    const all = toolDescriptors()
    expect(all.map((d) => d.name)).toEqual(TOOL_NAMES)
    expect(all[0]).toEqual({
      name: 'Read',
      description: toolSpecs.Read.description,
      input_schema: toolSpecs.Read.inputSchema,
    })
    expect(toolDescriptors(['Grep', 'Read']).map((d) => d.name)).toEqual(['Read', 'Grep'])
  })
})

describe('parseAllowedTools', () => {
  it('accepts valid names as a list or a comma/space separated string', () => {
    expect(parseAllowedTools(['Read', 'Bash', 'Read'])).toEqual(['Read', 'Bash'])
    expect(parseAllowedTools('Read, Grep list_files')).toEqual(['Read', 'Grep', 'list_files'])
    expect(parseAllowedTools('')).toEqual([])
  })
  it('throws listing the valid names for unknown ones', () => {
    expect(() => parseAllowedTools(['Read', 'read', 'Shell'])).toThrow(
      'unknown tools "read", "Shell"; valid tools: Read, Write, Edit, Bash, Grep, Glob, list_files',
    )
    expect(() => parseAllowedTools('constructor,toString')).toThrow('unknown tools "constructor", "toString"')
    expect(() => parseAllowedTools('__proto__ hasOwnProperty')).toThrow('unknown tools "__proto__", "hasOwnProperty"')
  })
})

describe('formatIssues', () => {
  it('joins issues as path: message', () => {
    expect(
      formatIssues([
        { path: ['a', 0], message: 'bad' },
        { path: [], message: 'worse' },
      ]),
    ).toBe('a.0: bad; (root): worse')
  })
})
