// HTTP throughput and start-up of `chimera otter serve`, each as a ratio against baselines
// measured in the same run. Prints; asserts nothing.
//   GET /health requests/s (autocannon, BENCH_CONNECTIONS connections for BENCH_SECONDS s) on
//   a bare node:http server, a bare h3 app (same node handler), and the Chimera app (auth,
//   guards, the generated operation table, a real SessionManager) on the same kind of server
//   and as the CLI serves it (listhen) — target >= 0.9x bare h3;
//   spawn to first 200 of the bundled CLI against spawning a bare node:http server.
// Run: node scripts/build.mjs && node_modules/.bin/tsx bench/http-health.ts
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type Server } from 'node:http'
import autocannon from 'autocannon'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { inProcessTarget, socketTarget } from '../conformance/harness/targets.ts'
import { nodeHandler } from '../server/http/node-handler.ts'
import { CLI_BUNDLE } from '../conformance/harness/targets.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
const SPAWNS = Number(process.env.BENCH_SPAWNS ?? 5)
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`
}

async function rps(url: string): Promise<number> {
  const r = await autocannon({ url: `${url}/health`, connections: CONNECTIONS, duration: SECONDS })
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`)
  return r.requests.average
}

const body = (): string => JSON.stringify({ status: 'ok', version: '0.0.0', started_at: new Date().toISOString() })
const bare = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(body())
})
const h3 = new H3().get('/health', () => ({ status: 'ok', version: '0.0.0', started_at: new Date().toISOString() }))
const h3Server = createServer(toNodeHandler(h3))
const chimera = await socketTarget()
const plain = inProcessTarget()
const chimeraNode = createServer(nodeHandler(plain.server.app))

const rows: [string, number][] = []
rows.push(['bare node:http', await rps(await listen(bare))])
rows.push(['bare h3', await rps(await listen(h3Server))])
rows.push(['chimera app, same node:http server', await rps(await listen(chimeraNode))])
rows.push(['chimera app, served by listhen (as the CLI does)', await rps(chimera.baseUrl)])
bare.close()
h3Server.close()
chimeraNode.close()
await chimera.close()
await plain.close()

async function firstOk(args: string[]): Promise<number> {
  const t0 = performance.now()
  // A throwaway CHIMERA_HOME: the server writes a pidfile and event logs there, never in the user's home.
  const home = mkdtempSync(join(tmpdir(), 'chimera-bench-'))
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CHIMERA_LOG_LEVEL: 'info', CHIMERA_HOME: home },
  })
  let text = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d))
  try {
    for (;;) {
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(text)?.[1]
      if (url) {
        const ok = await fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false,
        )
        if (ok) return performance.now() - t0
      }
      if (performance.now() - t0 > 20_000) throw new Error(`no 200 within 20 s: ${text.slice(-300)}`)
      await new Promise((r) => setTimeout(r, 2))
    }
  } finally {
    child.kill('SIGKILL')
    await new Promise((r) =>
      child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r),
    )
    rmSync(home, { recursive: true, force: true })
  }
}
const bareScript =
  "require('http').createServer((q,s)=>s.end('ok')).listen(0,'127.0.0.1',function(){console.log('http://127.0.0.1:'+this.address().port)})"
const spawnBare: number[] = []
const spawnChimera: number[] = []
for (let i = 0; i < SPAWNS; i++) {
  spawnBare.push(await firstOk(['-e', bareScript]))
  spawnChimera.push(await firstOk([CLI_BUNDLE, 'otter', 'serve', '--port', '0']))
}

const h3rps = rows[1]![1]
console.log(`GET /health, ${CONNECTIONS} connections, ${SECONDS} s each (autocannon)`)
console.log('| server | req/s | vs bare h3 |')
console.log('|---|---:|---:|')
for (const [name, v] of rows) console.log(`| ${name} | ${v.toFixed(0)} | ${(v / h3rps).toFixed(2)}x |`)
console.log(
  `\nspawn to first 200 (median of ${SPAWNS}): bare node:http ${median(spawnBare).toFixed(0)} ms, chimera otter serve ${median(spawnChimera).toFixed(0)} ms (${(median(spawnChimera) / median(spawnBare)).toFixed(2)}x)`,
)
process.exit(0)
