/**
 * A session's undo and redo: `/undo` and `/redo` move the messages and, with a file history,
 * the files by the same number of turns (never more than both sides can), and the file history
 * is lined up with the messages, committed after each turn and cleared at teardown.
 */
import { rewindReply } from './slash-commands.ts'
import type { RewindResult, SessionCore } from './session-types.ts'

/** Rewind (`undo`) or replay (`redo`) up to `steps` turns; records an `undo`/`redo` event (or an `error`). */
export async function rewind(core: SessionCore, kind: 'undo' | 'redo', steps: number): Promise<RewindResult> {
  const { deps, state } = core
  const history = deps.history
  const counts = history ? await history.counts() : undefined
  const messageSide = kind === 'undo' ? state.turnStarts.length : state.redo.length
  const fileSide = counts ? (kind === 'undo' ? counts.undoable : counts.redoable) : messageSide
  const n = Math.max(0, Math.min(steps, messageSide, fileSide))
  let files: string[] = []
  if (n > 0 && history) {
    try {
      files = (await history[kind](n)).files
    } catch (err) {
      // The files could not be moved: the messages stay where they are too.
      const message = `/${kind}: the files could not be ${kind === 'undo' ? 'rewound' : 'replayed'}: ${err instanceof Error ? err.message : String(err)}`
      deps.logger.error(`session ${core.id}: ${message}`)
      await core.emit('error', { message, source: 'command' })
      await core.writeSummary()
      return { turns: 0, files_restored: 0, remaining: Math.min(messageSide, fileSide), files: [], output: message }
    }
  }
  const remaining = Math.max(0, Math.min(messageSide, fileSide) - n)
  const output = rewindReply(kind, n, files.length, remaining)
  await core.emit(kind, { turns: n, files_restored: files.length, remaining, files, output })
  // Settles the summary write the event started (the store runs them in order).
  await core.writeSummary()
  return { turns: n, files_restored: files.length, remaining, files, output }
}

/** How many turns can be undone and redone now. */
export async function rewindCounts(core: SessionCore): Promise<{ undoable: number; redoable: number }> {
  const c = (await core.deps.history?.counts()) ?? { undoable: Infinity, redoable: Infinity }
  return {
    undoable: Math.min(c.undoable, core.state.turnStarts.length),
    redoable: Math.min(c.redoable, core.state.redo.length),
  }
}

/** Line the file history up with the messages (a failure is logged). */
export async function alignHistory(core: SessionCore): Promise<void> {
  try {
    await core.deps.history?.align?.({
      undoable: core.state.turnStarts.length,
      redoable: core.state.redo.length,
      turns: core.state.turns,
    })
  } catch (err) {
    core.deps.logger.error(`session ${core.id}: undo history not aligned`, err)
  }
}

/** Record the files a turn changed as one undo step (a failure is logged). */
export async function commitFiles(core: SessionCore, changed: readonly string[]): Promise<void> {
  try {
    await core.deps.history?.commitTurn(changed)
  } catch (err) {
    core.deps.logger.error(`session ${core.id}: undo snapshot not recorded`, err)
  }
}

/** Remove the file-level undo history (a failure is logged). */
export async function clearHistory(core: SessionCore): Promise<void> {
  try {
    await core.deps.history?.clear()
  } catch (err) {
    core.deps.logger.error(`session ${core.id}: undo history not cleared`, err)
  }
}
