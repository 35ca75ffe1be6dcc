/**
 * An MCP `tools/call` result as a tool outcome: text blocks joined, other blocks (image, audio,
 * embedded resource, resource link) described in a line (the core's tool results are text), a
 * result with only `structuredContent` as its JSON, `isError` as a failed outcome. The text is
 * bounded like Bash output (MAX_MCP_OUTPUT_CHARS, the start kept, a marker says how much was
 * cut); `data.mcp` keeps the block kinds and whether it was cut.
 */
import type { ToolOutcome } from '../tools/types.ts'

export const MAX_MCP_OUTPUT_CHARS = 100 * 1024

type Block = { type?: unknown; [k: string]: unknown }

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Decoded size of base64 text, without decoding it. */
const b64Bytes = (b64: string | undefined): number => {
  const s = (b64 ?? '').replace(/\s/g, '')
  return Math.max(0, Math.floor((s.length * 3) / 4) - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0))
}

function describe(b: Block): string {
  switch (b.type) {
    case 'text':
      return str(b.text) ?? ''
    case 'image':
    case 'audio':
      return `[${b.type}: ${str(b.mimeType) ?? 'unknown type'}, ${b64Bytes(str(b.data))} bytes]`
    case 'resource': {
      const r = (b.resource ?? {}) as Block
      const text = str(r.text)
      return text !== undefined
        ? text
        : `[resource ${str(r.uri) ?? ''}: ${str(r.mimeType) ?? 'binary'}, ${b64Bytes(str(r.blob))} bytes]`
    }
    case 'resource_link':
      return `[resource link: ${str(b.uri) ?? ''}${str(b.name) ? ` (${str(b.name)})` : ''}]`
    default:
      return `[${String(b.type)} content]`
  }
}

/** Cut `text` to `max` characters with a marker saying how many were left out. */
export function bound(text: string, max = MAX_MCP_OUTPUT_CHARS): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false }
  return { text: `${text.slice(0, max)}\n…[output truncated: ${text.length - max} more characters]`, truncated: true }
}

export function toOutcome(result: unknown): ToolOutcome {
  const r = (result ?? {}) as {
    content?: unknown
    structuredContent?: unknown
    isError?: unknown
    toolResult?: unknown
  }
  const blocks: Block[] = Array.isArray(r.content)
    ? (r.content as Block[]).filter((b) => b && typeof b === 'object')
    : []
  let text = ''
  let size = 0
  const parts: string[] = []
  for (const b of blocks) {
    // Stop gathering once well past the bound: a huge result is not copied whole.
    if (size > MAX_MCP_OUTPUT_CHARS * 2) break
    const t = describe(b)
    parts.push(t)
    size += t.length
  }
  text = parts.join('\n')
  if (!blocks.length && r.structuredContent !== undefined) text = JSON.stringify(r.structuredContent)
  else if (!blocks.length && r.toolResult !== undefined) text = JSON.stringify(r.toolResult) ?? ''
  const b = bound(text)
  const data = {
    mcp: { content: blocks.map((x) => String(x.type)).slice(0, 100), ...(b.truncated ? { truncated: true } : {}) },
  }
  if (r.isError === true) return { ok: false, error: b.text || 'the MCP tool reported an error', data }
  return { ok: true, output: b.text, data }
}
