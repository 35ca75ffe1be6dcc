/**
 * The LSP tools' failure messages (docs/lsp.md, word for word) and the error type that carries
 * them from the runtime to the tools, which turn it into a tool error (never a throw).
 */

export const NOT_CONFIGURED = 'LSP not configured'
export const TIMED_OUT = 'LSP request timed out'

/** An LSP failure whose message is what the tool reports. */
export class LspError extends Error {
  override name = 'LspError'
}

/** `no language server for <ext>` (the file name when it has no extension). */
export function noServerFor(ext: string): LspError {
  return new LspError(`no language server for ${ext}`)
}

/** `LSP server failed: <reason>`: not installed, would not start, crashed mid-call. */
export function serverFailed(reason: string): LspError {
  return new LspError(`LSP server failed: ${reason}`)
}

export function timedOut(): LspError {
  return new LspError(TIMED_OUT)
}
