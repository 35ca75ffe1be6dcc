#!/usr/bin/env node
// Mutant: an HTTP server that answers errors with status 200 (the error body unchanged), so a
// client that trusts the status thinks the call worked. Usage: http-200-error.mjs <server command
// with --port N…>; the mutant listens on N and runs the real server on another port.
import { createServer, request } from 'node:http'
import { child, freePort, ready, swapPort } from './proxy.mjs'

const inner = await freePort()
const [argv, port] = swapPort(process.argv.slice(2), inner)
child(argv)
await ready(inner)
createServer((req, res) => {
  const up = request(
    { host: '127.0.0.1', port: inner, method: req.method, path: req.url, headers: req.headers },
    (r) => {
      const status = r.statusCode >= 400 && r.statusCode !== 401 ? 200 : r.statusCode
      res.writeHead(status, r.headers)
      r.pipe(res)
    },
  )
  up.on('error', () => {
    res.writeHead(502).end()
  })
  req.pipe(up)
}).listen(port, '127.0.0.1')
