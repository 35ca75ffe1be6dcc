/**
 * Per-scenario set-up of a target: a temporary workspace (the scenario's files) and home, the
 * profile's files, environment and arguments with its variables filled in, the named
 * configuration the scenario needs; for an HTTP target (REST+SSE, or ACP over the network:
 * acp-http, acp-ws) with a command, the server started on a free loopback port and polled until
 * it answers. Everything made here is removed by `close`.
 */
import { release, signalGroup, supervise } from '../../../server/platform/supervisor.ts'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { freePort, type PortRange } from './ports.ts'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, resolve, sep } from 'node:path'
import type { StdioTarget } from '../../harness/arms/stdio.ts'
import { isAcpNet, type AcpNetTransportId, type TransportId } from '../corpus/ids.ts'
import { endpointFor, type AcpNetTarget } from '../../harness/arms/acp-net.ts'
import { expand, expandDeep, type Launch, type ResolvedProfile } from '../profiles/profile.ts'
import { kitRoot } from '../paths.ts'
import type { HttpEndpoint } from '../adapters/http.ts'

export interface DoubleInfo {
  /** OpenAI base URL (`…/v1`). */
  url: string
  /** The bare origin, for Anthropic and Gemini clients, which add their own API path. */
  origin?: string
  model: string
  key: string
}

export interface Prepared {
  workspace: string
  stdio?: StdioTarget
  http?: HttpEndpoint
  /** ACP over the network: the endpoint URL and token (acp-http, acp-ws). */
  acp?: AcpNetTarget
  close(): Promise<void>
}

/** ACP endpoints someone else serves (`--acp-http <url>`, `--acp-ws <url>`, `--token`). */
export type ExternalAcp = Partial<Record<AcpNetTransportId, { url: string; token?: string }>>

export class SkipError extends Error {
  override name = 'SkipError'
}

function deepMerge(a: unknown, b: unknown): unknown {
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) }
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], v) : v
    return out
  }
  return b
}

function writeFiles(files: Record<string, unknown>, workspace: string, home: string): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = isAbsolute(rel) ? resolve(rel) : resolve(workspace, rel)
    if (![workspace, home].some((d) => p.startsWith(d + sep)))
      throw new Error(`profile file ${rel} is outside the scenario's workspace and home`)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`)
  }
}

async function waitReady(url: string, child: ChildProcess, stderr: () => string, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the server exited with code ${child.exitCode} before it answered: ${stderr().slice(-400)}`)
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) })
      await r.arrayBuffer()
      // A proxy in front of a server still starting answers 502/503: not ready yet.
      if (r.status < 500) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`the server did not answer ${url} within ${ms} ms: ${stderr().slice(-400)}`)
}

async function stop(child: ChildProcess): Promise<void> {
  const pid = child.pid
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((r) => child.once('exit', () => r()))
    if (pid !== undefined) signalGroup(pid, 'SIGTERM')
    const t = setTimeout(() => {
      if (pid !== undefined) signalGroup(pid, 'SIGKILL')
    }, 3000)
    await exited
    clearTimeout(t)
  }
  // What is left of its group goes too.
  if (pid !== undefined) {
    signalGroup(pid, 'SIGKILL')
    release(pid)
  }
}

export interface PrepareOptions {
  profile: ResolvedProfile
  transport: TransportId
  workspaceFiles: Record<string, string>
  config: Record<string, string>
  double?: DoubleInfo
  /** An HTTP server someone else runs (`--http <url>`); used as is. */
  externalHttp?: HttpEndpoint
  /** ACP endpoints someone else serves; used as they run. */
  externalAcp?: ExternalAcp
  /** How long an HTTP server may take to answer its readiness path (--timeout plus the start-up grace). */
  readyMs?: number
  /** Where a started HTTP server's port comes from (`--ports`). */
  ports?: PortRange
}

/** Set up one run of one scenario on one transport. Throws SkipError when the profile cannot provide what the scenario needs. */
export async function prepare(o: PrepareOptions): Promise<Prepared> {
  const launch: Launch | undefined = o.profile.profile.targets[o.transport]
  const workspace = mkdtempSync(join(tmpdir(), 'chimera-kit-ws-'))
  const home = mkdtempSync(join(tmpdir(), 'chimera-kit-home-'))
  const cleanup: (() => Promise<void>)[] = [
    async () => rmSync(workspace, { recursive: true, force: true }),
    async () => rmSync(home, { recursive: true, force: true }),
  ]
  const close = async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {})
  }
  try {
    writeFiles(o.workspaceFiles, workspace, home)
    const extra = { args: [] as string[], env: {} as Record<string, string>, files: {} as Record<string, unknown> }
    // A server given by --http runs as it was started: its configuration is checked below, not set.
    const served = o.transport === 'http' || isAcpNet(o.transport)
    const external = served && !launch?.command
    for (const [k, v] of Object.entries(external ? {} : o.config)) {
      const c = o.profile.profile.config[`${k}=${v}`]
      if (!c) throw new SkipError(`needs configuration ${k}=${v}, which the profile does not say how to set`)
      extra.args.push(...c.args)
      Object.assign(extra.env, c.env)
      extra.files = deepMerge(extra.files, c.files) as Record<string, unknown>
    }
    const port = served && launch?.command ? await freePort(o.ports) : 0
    const vars: Record<string, string> = {
      'double.url': o.double?.url ?? '',
      'double.origin': o.double?.origin ?? o.double?.url.replace(/\/v1$/, '') ?? '',
      'double.model': o.double?.model ?? '',
      'double.key': o.double?.key ?? '',
      home,
      workspace,
      port: String(port),
      token:
        launch?.token ?? (isAcpNet(o.transport) ? o.externalAcp?.[o.transport]?.token : o.externalHttp?.token) ?? '',
      kit: kitRoot(),
      node: process.execPath,
      profile: o.profile.dir,
    }
    const files = deepMerge(expandDeep(launch?.files ?? {}, vars), expandDeep(extra.files, vars)) as Record<
      string,
      unknown
    >
    writeFiles(files, workspace, home)
    const env = Object.fromEntries(
      Object.entries({ ...(launch?.env ?? {}), ...extra.env }).map(([k, v]) => [k, expand(v, vars)]),
    )
    if (isAcpNet(o.transport) && !launch?.command) {
      const given = o.externalAcp?.[o.transport]
      if (!given)
        throw new SkipError(
          `no ${o.transport} target (give --${o.transport} <url> or a profile with targets.${o.transport})`,
        )
      if (Object.keys(o.config).length)
        throw new SkipError(
          `needs the agent started with ${JSON.stringify(o.config)}; an agent given by --${o.transport} is used as it runs`,
        )
      return { workspace, acp: { url: given.url, token: given.token, cwd: workspace }, close }
    }
    if (served) {
      if (!launch?.command) {
        if (!o.externalHttp) throw new SkipError('no HTTP target (give --http <url> or a profile with targets.http)')
        const { auth, ...rest } = o.config
        if (auth === 'token' && !o.externalHttp.token)
          throw new SkipError('needs a server with a master token (give --token)')
        if (auth === 'none' && o.externalHttp.token)
          throw new SkipError('needs a server without a master token (run without --token)')
        if (Object.keys(rest).length)
          throw new SkipError(
            `needs the server started with ${JSON.stringify(rest)}; a server given by --http is used as it runs`,
          )
        return { workspace, http: o.externalHttp, close }
      }
      const command = [...launch.command, ...extra.args].map((a) => expand(a, vars))
      // detached: its own process group, stopped whole (see stop()).
      const child = spawn(command[0]!, command.slice(1), {
        cwd: workspace,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      })
      if (child.pid !== undefined) supervise(child.pid, 'target')
      let err = ''
      child.stderr!.on('data', (d: Buffer) => {
        err = (err + d.toString('utf8')).slice(-4000)
      })
      cleanup.push(() => stop(child))
      const acp = isAcpNet(o.transport)
      const url = expand(launch.url ?? `http://127.0.0.1:\${port}${acp ? '/acp' : ''}`, vars).replace(/\/$/, '')
      // The readiness path is plain HTTP on the server's origin, also for a ws:// endpoint.
      const ready = acp ? new URL(launch.ready, endpointFor('acp-http', url)).href : url + launch.ready
      await waitReady(ready, child, () => err, o.readyMs ?? 40_000)
      const token = launch.token === undefined ? undefined : expand(launch.token, vars)
      if (acp) return { workspace, acp: { url, token, cwd: workspace, log: () => err }, close }
      return {
        workspace,
        http: { baseUrl: url, token: launch.token === undefined ? undefined : expand(launch.token, vars) },
        close,
      }
    }
    if (!launch?.command) throw new SkipError(`no ${o.transport} target`)
    const command = [...launch.command, ...extra.args].map((a) => expand(a, vars))
    return { workspace, stdio: { command, cwd: workspace, env }, close }
  } catch (e) {
    await close()
    throw e
  }
}
