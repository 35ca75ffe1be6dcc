/** Whether a process runs (tests of process cleanup). */
import { readFileSync } from 'node:fs'

/** Running, not a zombie: a container's pid 1 may never reap an orphan it inherits. */
export function running(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}
