/**
 * The lazy ACP start (docs/decisions/0140): the early `initialize` answer is the one each
 * dialect gives, the params check only lets through what the generated validator accepts, and
 * the server answers `initialize` before it asks for the session manager, holding the requests
 * behind it until the manager is there.
 */
import { PassThrough } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { acpSeedMethods } from '../../generated/acp/seed.gen.ts'
import { testEnv, within, type TestEnv } from '../core/fixtures/harness.ts'
import type { SessionManager } from '../core/manager.ts'
import { Connection } from '../../client/wire/jsonrpc/connection.ts'
import { createLogger } from '../log.ts'
import { negotiate, type AgentName } from './dialect.ts'
import { plainInitialize, seedInitialize, v1Extensions, v1Initialize } from './initialize.ts'
import { serveAcp } from './serve-acp.ts'
import { createSeedDialect } from './seed-dialect.ts'
import { createV1Dialect } from './v1-dialect.ts'
import { V1Agent } from './v1/agent.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-lazy-')
})
afterEach(async () => {
  await env.cleanup()
})

const AGENTS: AgentName[] = ['otter', 'ferret']
const logger = createLogger({ level: 'error', sink: () => {} })

/** Params real clients send (Zed, the official SDK, the seed documents), and odd ones. */
const V1_PARAMS: unknown[] = [
  { protocolVersion: 1 },
  { protocolVersion: 1, clientCapabilities: {} },
  {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: true,
      _meta: { 'ferret/updates': true },
    },
  },
  {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true } },
    clientInfo: { name: 'zed', title: 'Zed', version: '0.200.0' },
    _meta: null,
  },
  { protocolVersion: 7, clientInfo: null },
  { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: 'yes' } } },
  { protocolVersion: 1, clientCapabilities: { terminal: 1 } },
  { protocolVersion: 1, clientCapabilities: { auth: { terminal: true } } },
  { protocolVersion: 1, clientInfo: { name: 'x' } },
  { protocolVersion: 70000 },
  { protocolVersion: 1, extra: true },
  { protocolVersion: 1, clientCapabilities: [] },
  { protocolVersion: 1, _meta: 3 },
]
const SEED_PARAMS: unknown[] = [
  undefined,
  null,
  {},
  { protocolVersion: '0.2' },
  { protocolVersion: 2, clientCapabilities: { streaming: true }, clientInfo: { name: 'vscode' } },
  { clientCapabilities: 'all' },
  { clientInfo: [] },
  [],
  'init',
]

describe('early initialize answer', () => {
  it('lists the extensions the v1 agent serves', () => {
    for (const agent of AGENTS) {
      const v1 = new V1Agent({
        agent,
        conn: new Connection({ input: new PassThrough(), output: new PassThrough(), maxLineBytes: 1024, logger }),
        manager: env.manager(),
        logger,
      })
      expect(v1Extensions(agent)).toEqual(v1.extensions())
    }
  })

  it('is what each dialect answers, for every params the check lets through', async () => {
    const conn = new Connection({ input: new PassThrough(), output: new PassThrough(), maxLineBytes: 1024, logger })
    const ctx = { signal: new AbortController().signal, id: 1 }
    let early = 0
    for (const agent of AGENTS) {
      const info = { agent, version: '9.9.9' }
      const dctx = { conn, manager: env.manager(), logger }
      for (const params of [...V1_PARAMS, ...SEED_PARAMS]) {
        const name = negotiate(params)
        if (!plainInitialize(name, params)) continue
        early++
        const dialect = name === 'acp-v1' ? createV1Dialect(info, dctx) : createSeedDialect(agent, info, dctx)
        const answer = name === 'acp-v1' ? v1Initialize(info, v1Extensions(agent)) : seedInitialize(info)
        expect(await dialect.dispatcher.call('initialize', params, ctx)).toEqual(answer)
      }
    }
    expect(early).toBeGreaterThanOrEqual(2 * 8)
  })

  it('the check passes only params the generated validator accepts, and the usual ones', () => {
    for (const params of V1_PARAMS) {
      expect(negotiate(params)).toBe('acp-v1')
      if (plainInitialize('acp-v1', params)) expect(acpV1Methods.initialize.params.safeParse(params).success).toBe(true)
    }
    for (const params of SEED_PARAMS) {
      if (negotiate(params) !== 'seed') continue
      if (plainInitialize('seed', params))
        expect(acpSeedMethods.initialize.params.safeParse(params ?? {}).success).toBe(true)
    }
    expect(V1_PARAMS.slice(0, 5).every((p) => plainInitialize('acp-v1', p))).toBe(true)
    expect(V1_PARAMS.slice(5).some((p) => plainInitialize('acp-v1', p))).toBe(false)
    expect(SEED_PARAMS.slice(0, 5).every((p) => plainInitialize('seed', p))).toBe(true)
    expect(SEED_PARAMS.slice(5).some((p) => plainInitialize('seed', p))).toBe(false)
  })
})

describe('serveAcp with a session manager built on demand', () => {
  function start(agent: AgentName, manager: () => Promise<SessionManager>) {
    const input = new PassThrough()
    const output = new PassThrough()
    const frames: Record<string, any>[] = []
    const waiters: (() => void)[] = []
    let buf = ''
    output.setEncoding('utf8').on('data', (d: string) => {
      buf += d
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        frames.push(JSON.parse(buf.slice(0, i)))
        buf = buf.slice(i + 1)
      }
      for (const w of waiters.splice(0)) w()
    })
    const done = serveAcp({ agent, version: '0.0.0', input, output, logger, manager })
    const response = (id: number) =>
      within(
        new Promise<Record<string, any>>((resolve) => {
          const check = (): void => {
            const m = frames.find((f) => f.id === id && !('method' in f))
            if (m) resolve(m)
            else waiters.push(check)
          }
          check()
        }),
        8000,
        `response ${id}`,
      )
    const send = (id: number, method: string, params: unknown): void =>
      void input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    return { input, frames, done, response, send }
  }

  it('answers initialize before asking for the manager; a pipelined session/new waits for it', async () => {
    let asked = 0
    let release!: (m: SessionManager) => void
    const gate = new Promise<SessionManager>((r) => (release = r))
    const s = start('ferret', () => {
      asked++
      return gate
    })
    s.send(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} })
    s.send(2, 'session/new', { cwd: env.home, mcpServers: [] })
    const init = await s.response(1)
    expect(init.result).toEqual(v1Initialize({ agent: 'ferret', version: '0.0.0' }, v1Extensions('ferret')))
    expect(s.frames.some((f) => f.id === 2)).toBe(false)
    await within(
      (async () => {
        while (asked === 0) await new Promise((r) => setImmediate(r))
      })(),
      8000,
      'the manager asked for',
    )
    expect(s.frames.some((f) => f.id === 2)).toBe(false)
    release(env.manager({ agent: 'ferret' }))
    const created = await s.response(2)
    expect(created.result?.sessionId).toMatch(/^ferret-/)
    expect(asked).toBe(1)
    s.input.end()
    await s.done
  })

  it('params the check does not recognise get the validator error, as before', async () => {
    let asked = 0
    const s = start('otter', async () => {
      asked++
      return env.manager()
    })
    s.send(1, 'initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: 'yes' } } })
    const r = await s.response(1)
    expect(r.error?.code).toBe(-32602)
    expect(JSON.stringify(r.error?.data)).toMatch(/readTextFile/)
    s.send(2, 'session/list', {})
    expect(JSON.stringify((await s.response(2)).error)).toMatch(/must be initialized/)
    expect(asked).toBe(1)
    s.input.end()
    await s.done
  })

  it('a connection that ends without initialize never builds the manager', async () => {
    let asked = 0
    const s = start('ferret', async () => {
      asked++
      return env.manager()
    })
    s.send(1, 'session/list', {})
    expect(JSON.stringify((await s.response(1)).error)).toMatch(/must be initialized/)
    s.input.end()
    await s.done
    expect(asked).toBe(0)
  })
})
