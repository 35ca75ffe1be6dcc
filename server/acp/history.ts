/**
 * The bounded replay window shared by the seed `session/resume {sinceEventId}` and the v1
 * `_chimera/session/replay` (docs/decisions/0070, 0120): only the newest
 * `OTTER_ACP_DEFAULT_HISTORY_SIZE` (default 1024) notifications of a session can be replayed;
 * `truncated` says a notification after the cursor fell out of that window. The store keeps
 * everything: the bound limits a replay, nothing is lost.
 *
 * Cursor edge cases (docs/zed.md): omitted, 0 or negative → everything retained; at or past the
 * newest event → nothing (replayed 0, not truncated).
 */
export const DEFAULT_HISTORY_SIZE = 1024

/** `OTTER_ACP_DEFAULT_HISTORY_SIZE`, when a positive integer; else the default. */
export function historySize(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.OTTER_ACP_DEFAULT_HISTORY_SIZE)
  return Number.isSafeInteger(n) && n > 0 ? n : DEFAULT_HISTORY_SIZE
}

/** docs/zed.md "Cursor edge cases": anything but a positive safe integer means "from the start". */
export function normaliseCursor(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0
}

export interface ReplayWindow<T> {
  /** The retained notifications after the cursor, oldest first. */
  replay: T[]
  /** The event id of the newest notification (0 when the session has none). */
  lastEventId: number
  /** A notification after the cursor is older than the oldest one retained. */
  truncated: boolean
}

/** Which of a session's notifications (oldest first, `eventId` non-decreasing) a replay after `cursor` writes. */
export function replayWindow<T extends { eventId: number }>(
  all: readonly T[],
  cursor: number,
  limit: number,
): ReplayWindow<T> {
  const evicted = Math.max(0, all.length - limit)
  return {
    replay: all.slice(evicted).filter((u) => u.eventId > cursor),
    lastEventId: all.at(-1)?.eventId ?? 0,
    truncated: evicted > 0 && all[evicted - 1]!.eventId > cursor,
  }
}
