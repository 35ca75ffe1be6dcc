/**
 * The Write tool: create or overwrite a workspace file, creating missing parent directories.
 * The file is written at its resolved real path, so a symlink cannot redirect the write out of
 * the workspace after the check.
 */
import { mkdir, stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { WriteInput } from '../../generated/tools/tools.gen.ts'
import { errorCode, errorText, fail, succeed } from './outcome.ts'
import { confinePath, displayPath, lexicalPath } from './paths.ts'
import type { Tool } from './types.ts'

/** The Write tool. */
export const writeTool: Tool<WriteInput> = {
  name: 'Write',
  permissionKey: (args, ctx) => lexicalPath(ctx.cwd, args.path),
  async run(args, ctx) {
    const where = await confinePath('Write', ctx, args.path, { forWrite: true })
    if (!where.ok) return where.outcome
    const name = displayPath(where.root, where.abs)
    let created = true
    try {
      const st = await stat(where.abs)
      if (st.isDirectory()) return fail(`${name} is a directory; cannot write file content to it`)
      created = false
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') return fail(`cannot write ${name}: ${errorText(e)}`)
    }
    const bytes = Buffer.byteLength(args.content, 'utf8')
    try {
      await mkdir(dirname(where.abs), { recursive: true })
      await writeFile(where.abs, args.content, 'utf8')
    } catch (e) {
      return fail(`cannot write ${name}: ${errorText(e)}`)
    }
    return succeed(`${created ? 'Created' : 'Wrote'} ${name} (${bytes} bytes)`, { path: name, bytes, created })
  },
}
