// Shared plumbing of the mutant servers (conformance/mutants/*.mjs): each one runs the real
// implementation given on its command line behind a proxy that breaks exactly one rule, so the
// kit's self-test proves it catches that fault (and on which requirement). Plain .mjs so the
// mutants run under any Node without a TypeScript loader.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { createInterface } from 'node:readline'

/** Spawn `argv` with piped stdio; the mutant exits with the child and stops it on SIGTERM. */
export function child(argv) {
  const c = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] })
  c.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
  for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => c.kill(s))
  return c
}

/**
 * A stdio mutant: lines from our stdin go to the child through `toChild` (return a string, or
 * null to drop it), lines from the child go to our stdout through `toParent` (return a string,
 * an array of strings, or null). Framing stays LF-delimited.
 */
export function stdioProxy(argv, { toChild = (l) => l, toParent = (l) => l, onStart } = {}) {
  const c = child(argv)
  const out = (line) => process.stdout.write(`${line}\n`)
  onStart?.(out)
  createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (l) => {
    const r = toChild(l)
    if (r !== null && r !== undefined) c.stdin.write(`${r}\n`)
  })
  process.stdin.on('end', () => c.stdin.end())
  createInterface({ input: c.stdout, crlfDelay: Infinity }).on('line', (l) => {
    const r = toParent(l)
    for (const x of r === null || r === undefined ? [] : Array.isArray(r) ? r : [r]) out(x)
  })
  return { child: c, out, send: (line) => c.stdin.write(`${line}\n`) }
}

/** A free loopback port. */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer()
    s.once('error', rej)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => res(port))
    })
  })
}

/** Replace the value after `--port` in argv; returns [newArgv, oldPort]. */
export function swapPort(argv, port) {
  const i = argv.indexOf('--port')
  if (i < 0 || i + 1 >= argv.length) throw new Error('mutant: the wrapped HTTP server command needs --port N')
  const old = Number(argv[i + 1])
  const next = [...argv]
  next[i + 1] = String(port)
  return [next, old]
}

export const parse = (line) => {
  try {
    return JSON.parse(line)
  } catch {
    return undefined
  }
}

/** Resolve once the server on `port` answers `path` with a non-5xx status (the mutant listens only then). */
export async function ready(port, path = '/health', ms = 20_000) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1000) })
      await r.arrayBuffer()
      if (r.status < 500) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`mutant: the wrapped server did not answer on port ${port}`)
}
