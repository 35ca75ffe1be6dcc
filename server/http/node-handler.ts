/**
 * The h3 app as a Node request handler, with the checks that need the raw request before h3
 * turns it into a `Request` (where duplicate headers are already merged): a request with more
 * than one `Host` header is refused with 400, so no proxy or cache can disagree with the
 * DNS-rebinding check about which host was meant.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'

export function nodeHandler(app: H3): (req: IncomingMessage, res: ServerResponse) => void {
  const handle = toNodeHandler(app)
  return (req, res) => {
    let hosts = 0
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === 'host') hosts++
    if (hosts > 1) {
      res.writeHead(400, { 'content-type': 'application/json', connection: 'close' })
      res.end(JSON.stringify({ error: 'bad_request', message: 'more than one Host header' }))
      return
    }
    void handle(req, res)
  }
}
