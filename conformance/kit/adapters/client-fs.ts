/**
 * The kit as an ACP v1 client with a file system (specs/vendor/acp/schema.v1.json): answers the
 * agent's `fs/read_text_file` (1-based `line`, `limit` in lines) and `fs/write_text_file`
 * from the scenario's workspace. Paths must be absolute (the spec requires it) and inside the
 * workspace (the kit serves nothing else); a missing file is -32002 Resource not found.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'

export type FsAnswer =
  { result: Record<string, unknown> } | { error: { code: number; message: string; data?: unknown } }

const invalid = (message: string): FsAnswer => ({
  error: { code: -32602, message: 'Invalid params', data: { detail: message } },
})

/** The workspace-relative path of an absolute path inside `workspace`, or undefined. */
export function insideWorkspace(workspace: string, path: unknown): string | undefined {
  if (typeof path !== 'string' || !isAbsolute(path)) return undefined
  const rel = relative(resolve(workspace), resolve(path))
  return rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)
    ? undefined
    : rel.split(sep).join('/')
}

export function answerFs(workspace: string, method: string, params: Record<string, any> | undefined): FsAnswer {
  const rel = insideWorkspace(workspace, params?.path)
  if (rel === undefined)
    return invalid(`path must be an absolute path inside the workspace, got ${JSON.stringify(params?.path)}`)
  const abs = resolve(workspace, rel)
  if (method === 'fs/read_text_file') {
    let text: string
    try {
      text = readFileSync(abs, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        return { error: { code: -32002, message: 'Resource not found', data: { uri: abs } } }
      return { error: { code: -32603, message: 'Internal error', data: { detail: (e as Error).message } } }
    }
    const line = params?.line
    const limit = params?.limit
    if (line === undefined && limit === undefined) return { result: { content: text } }
    if (
      (line !== undefined && line !== null && !(Number.isInteger(line) && line >= 1)) ||
      (limit !== undefined && limit !== null && !(Number.isInteger(limit) && limit >= 0))
    )
      return invalid('line is 1-based and limit a count of lines')
    const lines = text.split(/(?<=\n)/)
    const from = (line ?? 1) - 1
    return {
      result: { content: lines.slice(from, limit === undefined || limit === null ? undefined : from + limit).join('') },
    }
  }
  if (method === 'fs/write_text_file') {
    if (typeof params?.content !== 'string') return invalid('content must be a string')
    mkdirSync(dirname(abs), { recursive: true })
    writeFileSync(abs, params.content)
    return { result: {} }
  }
  return { error: { code: -32601, message: 'Method not found', data: { method } } }
}
