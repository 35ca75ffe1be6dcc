/**
 * `serveAcp` over a message channel instead of stdio: the network transports (`/acp` over
 * Streamable HTTP and WebSocket, server/http/acp-endpoint.ts) and any other carrier of parsed
 * JSON-RPC messages. The messages cross a pair of PassThrough streams as newline-delimited JSON,
 * the stdio framing, so the connection is served by the very code that serves stdio (the
 * dialects, the line limit, the backpressure of client/wire/jsonrpc/connection.ts).
 *
 * Backpressure runs end to end: `send` is awaited before the next line is taken from the
 * agent's output, so a sink that stops taking messages stops the agent writing (its output
 * buffer fills, the connection stops reading requests); the source is read only while the
 * agent's input takes more.
 */
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { serveAcp, type AcpServerOptions } from './serve-acp.ts'

/** Parsed JSON-RPC messages in, parsed messages out. */
export interface AcpChannel {
  /** The client's messages; the connection ends when this ends (or throws). */
  messages: AsyncIterable<unknown>
  /** Deliver one message to the client; awaited before the next (backpressure). */
  send(message: unknown): Promise<void>
}

export type AcpChannelOptions = Omit<AcpServerOptions, 'input' | 'output'>

/** Serve one ACP connection over `channel`; resolves once the agent's output is fully sent. */
export async function serveAcpChannel(channel: AcpChannel, opts: AcpChannelOptions): Promise<void> {
  const input = new PassThrough()
  const output = new PassThrough()
  const source = channel.messages[Symbol.asyncIterator]()
  void (async () => {
    try {
      for (;;) {
        const next = await source.next()
        if (next.done || input.destroyed) break
        if (!input.write(`${JSON.stringify(next.value)}\n`)) await once(input, 'drain')
      }
    } catch {
      // A failed source (or an input destroyed while waiting for room) ends the connection like EOF.
    } finally {
      input.end()
    }
  })()
  const drain = (async () => {
    const text = new StringDecoder('utf8')
    let rest = ''
    let open = true
    for await (const chunk of output) {
      if (!open) continue
      rest += text.write(chunk as Buffer)
      let nl: number
      while (open && (nl = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, nl)
        rest = rest.slice(nl + 1)
        if (!line.trim()) continue
        // A sink that fails (the client is gone) ends the connection; the rest of the output is dropped.
        await channel.send(JSON.parse(line)).catch(() => {
          open = false
          input.destroy()
        })
      }
    }
  })()
  try {
    await serveAcp({ ...opts, input, output })
  } finally {
    output.end()
    await drain
    input.destroy()
    void source.return?.()
  }
}
