/**
 * Test helpers for the LSP tests: the processes running in a directory (language servers run
 * with their project root as working directory, so a test finds exactly its own servers).
 */
import { readdirSync, readlinkSync } from 'node:fs'

/** Pids of live processes whose working directory is `dir`. */
export function processesIn(dir: string): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir) found.push(Number(name))
    } catch {
      // gone meanwhile, or a zombie
    }
  }
  return found
}
