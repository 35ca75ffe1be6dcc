/**
 * A message writer that never rejects. vscode-jsonrpc writes some messages without waiting on
 * them (the `$/cancelRequest` after a cancel; the body after its header), so a write to a server
 * that just died (EPIPE, a destroyed stream) surfaced as an unhandled rejection — which ends a
 * Node process. Here a failed write resolves, and the first failure goes to `onFail`: the client
 * then waits for the process to exit and reports why (or ends a server that stopped reading).
 */
import type { Message, MessageWriter } from 'vscode-languageserver-protocol/node.js'

export function quietWriter(inner: MessageWriter, onFail: (err: Error) => void): MessageWriter {
  let failed = false
  return {
    onError: inner.onError,
    onClose: inner.onClose,
    write: (msg: Message) =>
      inner.write(msg).catch((err: unknown) => {
        if (failed) return
        failed = true
        onFail(err instanceof Error ? err : new Error(String(err)))
      }),
    end: () => inner.end(),
    dispose: () => inner.dispose(),
  }
}
