/**
 * When a response chunk's bytes are written (docs/decisions/0435-replay-buffers-reused.md): the
 * HTTP adapter writes each chunk of a streamed body with `res.write(chunk)` and no callback, so the
 * server cannot otherwise tell when the socket is done with a chunk's memory. For a chunk marked
 * here, the write is given a callback: Node calls it once the bytes are handed to the kernel, or
 * the write failed (the socket closed) — either way its buffer is no longer read after that.
 */
import type { ServerResponse } from 'node:http'

type Write = (chunk: unknown, ...rest: unknown[]) => boolean

/**
 * The node response behind `req`, when the server runs on `node:http` (the adapter puts it on the
 * request's `runtime.node`); undefined elsewhere (a `fetch` call in a test, another runtime).
 */
export function nodeResponse(req: Request): ServerResponse | undefined {
  const res = (req as { runtime?: { node?: { res?: unknown } } }).runtime?.node?.res
  return res !== null && typeof res === 'object' && typeof (res as { write?: unknown }).write === 'function'
    ? (res as ServerResponse)
    : undefined
}

/**
 * `written(chunk, done)` for a stream (sse-stream.ts): `done` runs after the write of exactly that
 * chunk completes or fails. A marked chunk never written (the stream was cancelled first) is
 * forgotten when the response closes, and its `done` never runs.
 */
export function nodeWrites(res: ServerResponse): (chunk: Uint8Array, done: () => void) => void {
  const waiting = new Map<Uint8Array, () => void>()
  const write = res.write as Write
  const patched: Write = function (this: ServerResponse, chunk, ...rest) {
    const done = rest.length === 0 ? waiting.get(chunk as Uint8Array) : undefined
    if (!done) return write.call(this, chunk, ...rest)
    waiting.delete(chunk as Uint8Array)
    return write.call(this, chunk, () => done())
  }
  ;(res as { write: Write }).write = patched
  res.once('close', () => waiting.clear())
  return (chunk, done) => {
    if (!res.destroyed) waiting.set(chunk, done)
  }
}
