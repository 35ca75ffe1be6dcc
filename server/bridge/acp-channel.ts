/**
 * One ACP connection over a WebSocket, served by the stdio server's code: each text frame in is
 * one line of a PassThrough the ACP server reads (newline-delimited JSON, the stdio framing), each
 * line it writes out is one text frame. Backpressure both ways: a peer that stops reading pauses
 * the writer (the session's event pump waits, memory stays bounded), and input the server has not
 * read yet pauses the socket.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream'
import { WebSocket, type RawData } from 'ws'

/** Frames buffered on the socket before the ACP server's output is paused. */
const HIGH_WATER_BYTES = 1024 * 1024

/** Serve `ws` with `serve` (e.g. serveAcp over `input`/`output`) until either side ends. */
export async function serveOverWebSocket(
  ws: WebSocket,
  serve: (input: Readable, output: Writable) => Promise<void>,
): Promise<void> {
  const input = new PassThrough()
  const output = new PassThrough()
  ws.on('message', (data: RawData) => {
    // A raw line break can only be whitespace between JSON tokens: one frame stays one line.
    const text = frameText(data).replace(/[\r\n]/g, ' ')
    if (!input.write(`${text}\n`)) {
      ws.pause()
      input.once('drain', () => ws.resume())
    }
  })
  ws.on('close', () => input.end())
  ws.on('error', () => input.end())
  let pending = ''
  output.setEncoding('utf8')
  output.on('data', (chunk: string) => {
    pending += chunk
    let nl: number
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      // Gone: what the server still writes (a turn finishing) is in the session's log anyway.
      if (!line || ws.readyState !== WebSocket.OPEN) continue
      ws.send(line, () => {
        if (output.isPaused() && ws.bufferedAmount < HIGH_WATER_BYTES / 2) output.resume()
      })
      if (ws.bufferedAmount >= HIGH_WATER_BYTES) output.pause()
    }
  })
  ws.on('close', () => output.resume())
  try {
    await serve(input, output)
  } finally {
    output.resume()
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)
      ws.close(1000, 'ACP connection ended')
  }
}

export function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8')
  return data.toString('utf8')
}
