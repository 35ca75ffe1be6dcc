/** The errors a session's operations throw. */

/** The event log refused to record an accepted prompt: nothing was queued (HTTP 507 `storage_full`). */
export class PromptNotRecordedError extends Error {
  override name = 'PromptNotRecordedError'
  constructor(cause: unknown) {
    super(`event log write failed (prompt not recorded): ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    })
  }
}

export class SessionBusyError extends Error {
  override name = 'SessionBusyError'
}

export class SessionClosedError extends Error {
  override name = 'SessionClosedError'
  constructor(id: string) {
    super(`session ${id} was closed`)
  }
}
