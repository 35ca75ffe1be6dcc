/**
 * An ACP prompt (ContentBlock[]) as the text the core takes: text blocks as they are,
 * resource links as `@uri` mentions, embedded text resources as fenced blocks naming their uri.
 * Images and audio are refused (the agent does not advertise them).
 */
import type { z } from 'zod'
import type { ContentBlockSchema } from '../../../generated/acp/v1-schema.gen.ts'
import { RpcError } from '../../../client/wire/jsonrpc/errors.ts'

type Block = z.output<typeof ContentBlockSchema>

export function promptText(blocks: readonly Block[]): string {
  const parts: string[] = []
  for (const b of blocks) {
    switch (b.type) {
      case 'text':
        parts.push(b.text)
        break
      case 'resource_link':
        parts.push(`@${b.uri}`)
        break
      case 'resource': {
        const r = b.resource as { uri: string; text?: string }
        if (typeof r.text !== 'string')
          throw RpcError.invalidParams([{ path: 'prompt', message: 'binary embedded resources are not supported' }])
        parts.push(`\n<resource uri="${r.uri}">\n${r.text}\n</resource>\n`)
        break
      }
      default:
        throw RpcError.invalidParams([
          { path: 'prompt', message: `${b.type} content is not supported (see promptCapabilities)` },
        ])
    }
  }
  return parts.join('\n')
}
