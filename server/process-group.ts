/** Signalling a process group: children spawned `detached` lead one, and whatever they started is in it. */

/** Signal the group led by `pid`; false when none of its processes is left. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal)
    return true
  } catch {
    return false
  }
}
