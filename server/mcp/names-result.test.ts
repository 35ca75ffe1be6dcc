/**
 * Pure parts of the MCP client: agent-facing tool names (sanitised, prefixed, within 64
 * characters, unique) and how a `tools/call` result becomes a tool outcome (block kinds,
 * structured content, isError, the output bound).
 */
import { describe, expect, it } from 'vitest'
import { isToolPattern } from '../core/tool-patterns.ts'
import { MAX_TOOL_NAME, serverSlug, toolName, unique } from './names.ts'
import { MAX_MCP_OUTPUT_CHARS, toOutcome } from './result.ts'

describe('MCP tool names', () => {
  it('are mcp__<server>__<tool> with only provider-safe characters', () => {
    expect(toolName(serverSlug('GitHub Tools'), 'search.issues')).toBe('mcp__GitHub_Tools__search_issues')
    expect(serverSlug('a__b')).toBe('a_b')
    expect(serverSlug('!!!')).toBe('server')
    for (const n of [toolName(serverSlug('x y/z'), 'héllo wörld'), toolName('s', 'Read')]) {
      expect(n).toMatch(/^mcp__[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*__[A-Za-z0-9_-]+$/)
      expect(isToolPattern(n)).toBe(true)
    }
  })

  it('stay within 64 characters and apart when long or alike', () => {
    const a = toolName('srv', 'x'.repeat(100))
    const b = toolName('srv', `${'x'.repeat(99)}y`)
    expect(a.length).toBe(MAX_TOOL_NAME)
    expect(a).not.toBe(b)
    const taken = new Set(['mcp__srv__t'])
    expect(unique('mcp__srv__t', taken)).toBe('mcp__srv__t_2')
    expect(unique('z'.repeat(64), new Set(['z'.repeat(64)])).length).toBe(64)
  })
})

describe('MCP call results', () => {
  it('join text, describe other blocks, and keep the block kinds', () => {
    const o = toOutcome({
      content: [
        { type: 'text', text: 'one' },
        { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inline text' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAE=', mimeType: 'application/octet-stream' } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
      ],
    })
    expect(o).toEqual({
      ok: true,
      output:
        'one\n[audio: audio/wav, 3 bytes]\ninline text\n[resource file:///b.bin: application/octet-stream, 2 bytes]\n[resource link: file:///c (c)]',
      data: { mcp: { content: ['text', 'audio', 'resource', 'resource', 'resource_link'] } },
    })
  })

  it('use structured content when there is no content, and fail on isError', () => {
    expect(toOutcome({ content: [], structuredContent: { n: 1 } })).toMatchObject({ ok: true, output: '{"n":1}' })
    expect(toOutcome({ isError: true, content: [] })).toMatchObject({
      ok: false,
      error: 'the MCP tool reported an error',
    })
  })

  it('bound the output', () => {
    const o = toOutcome({ content: Array.from({ length: 50 }, () => ({ type: 'text', text: 'y'.repeat(10_000) })) })
    expect(o.ok && o.output.length).toBeLessThan(MAX_MCP_OUTPUT_CHARS + 100)
    expect(o.ok && o.output).toMatch(/output truncated/)
    expect(o.data).toMatchObject({ mcp: { truncated: true } })
  })
})
