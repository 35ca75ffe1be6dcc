/**
 * Where a stream starts (docs/http.md "SSE resume contract"): the cursor after which events are
 * sent.
 *
 * | request                               | cursor                                         |
 * |---------------------------------------|------------------------------------------------|
 * | no `Last-Event-ID`                    | 0: full replay, then live                      |
 * | `Last-Event-ID: 0`                    | 0: full replay                                 |
 * | `Last-Event-ID: N` (N ≤ last counter) | N: events with id > N, then live               |
 * | `Last-Event-ID: N` past the end       | the last counter: no replay, live events only  |
 * | blank or not a non-negative integer   | as if absent: full replay                      |
 * | `?from=live` (plural stream)          | the last counter, unless a valid Last-Event-ID |
 *
 * A valid `Last-Event-ID` wins over `?from=live`: an EventSource reconnects to the same URL with
 * the last id it saw, and must get what it missed.
 */
export function startCursor(lastEventId: string | null, fromLive: boolean, lastSeq: number): number {
  const v = lastEventId?.trim() ?? ''
  if (/^\d+$/.test(v)) {
    const n = Number(v)
    return Number.isSafeInteger(n) && n <= lastSeq ? n : lastSeq
  }
  return fromLive ? lastSeq : 0
}
