/**
 * What the core needs from a session's file-level undo history (docs/undo.md "File-level undo";
 * the content-addressed snapshot store implements it). The core drives it: tools report the
 * files they are about to change, every finalized turn is committed, and `/undo` / `/redo`
 * rewind or replay whole turns — the session rewinds the messages of the same turns.
 */
export interface FileHistory {
  /** A tool is about to change `abs` in the running turn: keep its prior content (once per turn). */
  willChange(abs: string): Promise<void>
  /** A turn was finalized: snapshot the files it changed (possibly none). Discards the redo branch. */
  commitTurn(changed: readonly string[]): Promise<void>
  /** Rewind the newest `n` committed turns' files (at most what exists). */
  undo(n: number): Promise<{ turns: number; files: string[] }>
  /** Replay `n` rewound turns (at most what exists). */
  redo(n: number): Promise<{ turns: number; files: string[] }>
  /** Turns that can be undone, and redone. */
  counts(): Promise<{ undoable: number; redoable: number }>
  /** Remove everything the history stored (session teardown). */
  clear(): Promise<void>
  /**
   * Optional, for a history that keeps its own position on disk: called once before the
   * session's first operation after it was created or loaded, with the position of the
   * messages (turns that can be undone and redone, turns started in all). The history lines
   * itself up after a crash between a turn's end and its snapshot, or between a file rewind and
   * its `undo` / `redo` event.
   */
  align?(messages: { undoable: number; redoable: number; turns: number }): Promise<void>
}
