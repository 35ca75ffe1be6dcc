/** Whether a path lies beneath another: the one containment rule the file tools, LSP and commands share. */
import { isAbsolute, relative, sep } from 'node:path'

/** True when `abs` is `root` or lies beneath it (both real, absolute paths). */
export function isInside(root: string, abs: string): boolean {
  const rel = relative(root, abs)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}
