/** Whether a path lies beneath another: the one containment rule the file tools, LSP and commands share. */
import { isAbsolute, relative, sep } from 'node:path'

/**
 * An absolute POSIX path that `relative` would take as it is: no `.` or `..` segment (nor any
 * segment starting with a dot: those take the long way), no empty segment, no trailing `/` but
 * in `/` itself.
 */
const plainAbsolute = (p: string): boolean =>
  p.charCodeAt(0) === 47 &&
  !p.includes('/.') &&
  !p.includes('//') &&
  (p.length === 1 || p.charCodeAt(p.length - 1) !== 47)

/** True when `abs` is `root` or lies beneath it (both real, absolute paths). */
export function isInside(root: string, abs: string): boolean {
  // Both plain (the usual case: real paths, checked per entry of a walk): a prefix up to a `/`
  // decides, as `relative` would, without its resolving both paths again.
  if (sep === '/' && plainAbsolute(root) && plainAbsolute(abs))
    return abs === root || root === '/' || (abs.startsWith(root) && abs.charCodeAt(root.length) === 47)
  const rel = relative(root, abs)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}
