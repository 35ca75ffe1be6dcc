#!/usr/bin/env node
// A minimal HTTP + SSE server of the singular family (docs/http.md: POST /session, GET
// /session/{id}/events with `Last-Event-ID` resume, POST /session/{id}/message and /cancel),
// written for the kit's self-test. It plays the model double's directive lines itself
// (`!say text`, `!think text`, `!sleep ms`) with no model. With `--fault <name>` it breaks one rule:
//   resume-skip           a resumed stream skips the first event after Last-Event-ID
//   resume-repeat         a resumed stream repeats the Last-Event-ID event itself
//   ignore-last-event-id  a resumed stream replays from the start
//   any-session-token     a session token is accepted on another session's routes
// With `--auth-token T`, T (the master token) authorizes everything but /health, and the token
// POST /session returns authorizes only that session's /session/{id}/… routes (docs/http.md;
// elsewhere it is 403 admin_only).
// Usage: mini-http-server.mjs --port N [--auth-token T] [--fault name]. Without --fault it is the control.
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'

const arg = (name) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const port = Number(arg('--port'))
const fault = arg('--fault')
const master = arg('--auth-token')

/** Who the bearer is: 'master', a session id, or undefined. */
function bearer(req) {
  const m = /^bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')
  if (!m) return undefined
  if (m[1] === master) return 'master'
  for (const [id, s] of sessions) if (s.token === m[1]) return id
  return undefined
}
const sessions = new Map()
let n = 0

const json = (res, status, body) => {
  if (body === undefined) return res.writeHead(status).end()
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}
const NAME = { user_message: 'user_message', agent_result: 'result' }
const record = (e) => `id: ${e.id}\nevent: ${NAME[e.env.type] ?? 'loop_event'}\ndata: ${JSON.stringify(e.env)}\n\n`

function emit(s, type, data) {
  const e = {
    id: s.events.length + 1,
    env: { message_id: `m${s.turn}`, type, data, turn: s.turn, timestamp: Date.now() },
  }
  s.events.push(e)
  for (const c of s.clients) c.write(record(e))
}

async function run(s, text) {
  s.turn++
  emit(s, 'user_message', { message_id: `m${s.turn}`, text })
  let out = ''
  for (const line of text.split('\n')) {
    const m = /^!(say|think|sleep) ?(.*)$/.exec(line)
    if (!m) continue
    if (m[1] === 'say') {
      // Consecutive `say` lines are joined with a newline, as the model double does.
      const text = out ? `\n${m[2]}` : m[2]
      out += text
      emit(s, 'text_delta', { text })
    } else if (m[1] === 'think') emit(s, 'reasoning', { text: m[2] })
    else {
      const cancelled = await new Promise((res) => {
        const t = setTimeout(() => res(false), Number(m[2]) || 0)
        s.cancel = () => {
          clearTimeout(t)
          res(true)
        }
      })
      s.cancel = undefined
      if (cancelled) return emit(s, 'cancelled', { partial_output: out })
    }
  }
  emit(s, 'agent_result', { success: true, output: out })
}

const body = (req) =>
  new Promise((res) => {
    let t = ''
    req.on('data', (d) => (t += d))
    req.on('end', () => {
      try {
        res(JSON.parse(t || '{}'))
      } catch {
        res(undefined)
      }
    })
  })

createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x')
  const m = /^\/session\/([^/]+)\/(events|message|cancel)$/.exec(url.pathname)
  const s = m ? sessions.get(decodeURIComponent(m[1])) : undefined
  if (req.method === 'GET' && url.pathname === '/health') return json(res, 200, { status: 'ok' })
  if (master !== undefined) {
    const who = bearer(req)
    const own = m && who === decodeURIComponent(m[1])
    const ok = who === 'master' || (m && who !== undefined && (own || fault === 'any-session-token'))
    // docs/http.md decision tree: a valid session token on a master-only route is 403 admin_only.
    if (!ok && who !== undefined && !m)
      return json(res, 403, {
        error: 'admin_only',
        message: 'this route needs the master token; a session token is not enough',
      })
    if (!ok) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' })
      return res.end(JSON.stringify({ error: 'unauthorized', message: 'missing or invalid bearer token' }))
    }
  }
  if (req.method === 'POST' && url.pathname === '/session') {
    const b = await body(req)
    const id = `mini-${++n}`
    const token = randomBytes(32).toString('base64url')
    sessions.set(id, { events: [], clients: new Set(), turn: 0, token })
    return json(res, 201, {
      session_id: id,
      working_dir: String(b?.working_dir ?? '.'),
      created_at: Math.floor(Date.now() / 1000),
      session_token: token,
    })
  }
  if (m && !s) return json(res, 404, { error: 'session_not_found', message: 'no such session' })
  if (req.method === 'GET' && m?.[2] === 'events') {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    res.flushHeaders()
    const last = Number(req.headers['last-event-id'] ?? 0) || 0
    let from = last
    if (last && fault === 'resume-skip') from = last + 1
    if (last && fault === 'resume-repeat') from = last - 1
    if (fault === 'ignore-last-event-id') from = 0
    for (const e of s.events) if (e.id > from) res.write(record(e))
    s.clients.add(res)
    req.on('close', () => s.clients.delete(res))
    return
  }
  if (req.method === 'POST' && m?.[2] === 'message') {
    const b = await body(req)
    if (typeof b?.message !== 'string')
      return json(res, 400, { error: 'invalid_body', message: 'message must be a string' })
    json(res, 202, { message_id: `m${s.turn + 1}` })
    return void run(s, b.message)
  }
  if (req.method === 'POST' && m?.[2] === 'cancel') {
    s.cancel?.()
    return json(res, 204)
  }
  json(res, 404, { error: 'not_found', message: `${req.method} ${url.pathname} is not available` })
}).listen(port, '127.0.0.1')
