/**
 * One remote client's ACP connection on a bridge channel socket, served by `serveAcpChannel`
 * (server/acp/serve-acp-channel.ts: the stdio ACP server over a message channel, shared with
 * `/acp`): each text frame in is one JSON-RPC message, each message out one text frame. A frame
 * that is not JSON is answered with a parse error (`id: null`), as on stdio and the SDK's
 * WebSocket server. Backpressure both ways: while the agent's input holds messages the socket is
 * paused; a client that stops reading holds `send` (and so the session's event pump).
 */
import { WebSocket, type RawData } from 'ws'
import { RpcError } from '../../client/wire/jsonrpc/errors.ts'
import { serveAcpChannel, type AcpChannelOptions } from '../acp/serve-acp-channel.ts'

/** Frames held for the agent before the socket is paused. */
const MAX_QUEUED = 64

/** Serve `ws` as one ACP connection (a network one: `detach`) until either side ends. */
export async function serveOverWebSocket(ws: WebSocket, opts: AcpChannelOptions): Promise<void> {
  const queue: unknown[] = []
  let ended = false
  let wake: (() => void) | undefined
  const notify = (): void => {
    wake?.()
    wake = undefined
  }
  const send = (message: unknown): Promise<void> =>
    new Promise((resolve, reject) => {
      if (ws.readyState !== WebSocket.OPEN) return reject(new Error('the channel socket is closed'))
      ws.send(JSON.stringify(message), (err) => (err ? reject(err) : resolve()))
    })
  ws.on('message', (data: RawData) => {
    let value: unknown
    try {
      value = JSON.parse(frameText(data))
    } catch {
      void send({ jsonrpc: '2.0', id: null, error: RpcError.parseError().toJSON() }).catch(() => undefined)
      return
    }
    queue.push(value)
    if (queue.length >= MAX_QUEUED) ws.pause()
    notify()
  })
  const end = (): void => {
    ended = true
    notify()
  }
  ws.on('close', end)
  ws.on('error', end)
  async function* messages(): AsyncGenerator<unknown> {
    for (;;) {
      if (queue.length) {
        yield queue.shift()
        if (ws.isPaused && queue.length < MAX_QUEUED / 2) ws.resume()
        continue
      }
      if (ended) return
      await new Promise<void>((r) => (wake = r))
    }
  }
  try {
    await serveAcpChannel({ messages: messages(), send }, { ...opts, detach: true })
  } finally {
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)
      ws.close(1000, 'ACP connection ended')
  }
}

export function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8')
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8')
  return data.toString('utf8')
}
