#!/usr/bin/env node
// Mutant: a bearer check that accepts a token it did not issue (any bearer token whose value
// starts with the real one passes: a prefix compare in place of an exact, constant-time one).
// Usage: http-any-token.mjs <server command with --port N and --auth-token T…>
import { createServer, request } from 'node:http'
import { child, freePort, ready, swapPort } from './proxy.mjs'

const inner = await freePort()
const [argv, port] = swapPort(process.argv.slice(2), inner)
const t = argv.indexOf('--auth-token')
const token = t >= 0 ? argv[t + 1] : undefined
child(argv)
await ready(inner)
createServer((req, res) => {
  const headers = { ...req.headers }
  const m = /^bearer\s+(.+)$/i.exec(headers.authorization ?? '')
  if (token && m && m[1].startsWith(token)) headers.authorization = `Bearer ${token}`
  const up = request({ host: '127.0.0.1', port: inner, method: req.method, path: req.url, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers)
    r.pipe(res)
  })
  up.on('error', () => res.writeHead(502).end())
  req.pipe(up)
}).listen(port, '127.0.0.1')
