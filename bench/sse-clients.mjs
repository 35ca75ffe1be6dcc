// The SSE clients of bench/http-sse.ts's fan-out, in a process of their own (the server's process
// then spends its CPU on the server, as it would serving real clients). Given as JSON in argv[2]:
// { url, token, clients, after }. Opens `clients` streams of `url` with Last-Event-ID `after` and
// prints `ready` once every one has answered; then reads one line, the last id to expect, and
// prints one JSON line: { gaps, refused, received, p50, p99 } (the delivery latency percentiles:
// receive time - event time, ms, over every record), once every client has it or 10 s have
// passed, and exits.
import { request } from 'node:http'
import { createParser } from 'eventsource-parser'
import { createInterface } from 'node:readline'

const { url, token, clients, after } = JSON.parse(process.argv[2])
const last = new Array(clients).fill(after)
const lat = []
let gaps = 0
let refused = 0
let received = 0
let answered = 0
const reqs = []
let ready
const allAnswered = new Promise((resolve) => (ready = resolve))

for (let c = 0; c < clients; c++) {
  let counted = false
  const answer = () => {
    if (counted) return
    counted = true
    if (++answered === clients) ready()
  }
  const req = request(
    url,
    { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'last-event-id': String(after) } },
    (res) => {
      if (res.statusCode !== 200) refused++
      answer()
      let at = 0
      const parser = createParser({
        onEvent: (e) => {
          if (e.id === undefined) return
          const id = Number(e.id)
          if (id !== last[c] + 1) gaps++
          last[c] = id
          received++
          const data = JSON.parse(e.data)
          lat.push(at - (Date.parse(data.timestamp) || data.timestamp))
        },
      })
      res.setEncoding('utf8')
      res.on('data', (chunk) => {
        at = Date.now()
        parser.feed(chunk)
      })
      res.on('error', () => {})
    },
  )
  req.on('error', () => {
    if (counted) return
    refused++
    answer()
  })
  req.end()
  reqs.push(req)
}

await allAnswered
process.stdout.write('ready\n')
const lines = createInterface({ input: process.stdin })
const expected = Number(await new Promise((resolve) => lines.once('line', resolve)))
const until = Date.now() + 10_000
while (last.some((l) => l < expected) && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
gaps += last.filter((l) => l < expected).length
for (const r of reqs) r.destroy()
lat.sort((a, b) => a - b)
const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((lat.length * p) / 100))] ?? NaN
process.stdout.write(`${JSON.stringify({ gaps, refused, received, p50: pct(50), p99: pct(99) })}\n`, () =>
  process.exit(0),
)
