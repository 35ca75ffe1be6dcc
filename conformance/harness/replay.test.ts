/**
 * Self-tests of the replayer and the transcript parser: a replay fails (with the transcript's
 * file and line) when the server's answer is wrong, when nothing arrives, when something arrives
 * that should not, when a stdio peer writes a non-JSON line to stdout, and when the exit code
 * differs; an expected HTTP reply is taken even when records of an open stream arrived before
 * it. Stdio cases run small fixture peers from ./fixtures, so they test the harness, not Chimera.
 */
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseTranscript } from './transcript.ts'
import { rawBytes, replay, replaySteps, ReplayError } from './replay.ts'
import { StdioArm, type StdioTarget } from './arms/stdio.ts'
import { AcpSniffer } from './sniffer.ts'
import { Inbox } from './arms/queue.ts'
import type { Arm } from './arms/types.ts'

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const ECHO: StdioTarget = { command: [process.execPath, fixture('echo-agent.mjs')] }
const NOISY: StdioTarget = { command: [process.execPath, fixture('noisy-agent.mjs')] }

/** A transcript from lines of JSON values (line 1 = header). */
const transcript = (file: string, ...lines: unknown[]) =>
  parseTranscript(lines.map((l) => JSON.stringify(l)).join('\n'), file)

const ACP = { transcript: 1, title: 'harness self-test', surface: 'acp' }
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p
  } catch (e) {
    return e as Error
  }
  throw new Error('expected the replay to fail, but it passed')
}

describe('replay fails when it should', () => {
  it('a wrong expect against the real server (/health status 500) throws a ReplayError naming file and line, on http-inprocess', async () => {
    const t = transcript(
      'inline/health-500.jsonl',
      { transcript: 1, title: 'health is not 500', surface: 'http' },
      { send: { method: 'GET', path: '/health' } },
      { expect: { status: 500 } },
    )
    const err = await rejection(replay(t, 'http-inprocess'))
    expect(err).toBeInstanceOf(ReplayError)
    expect(err.message).toMatch(/^inline\/health-500\.jsonl:3: received /)
    expect(err.message).toMatch(/at \$\.status: expected 500, got 200/)
  })

  it('the same transcript with the right status passes on http-inprocess (control)', async () => {
    const t = transcript(
      'inline/health-200.jsonl',
      { transcript: 1, title: 'health is 200', surface: 'http' },
      { send: { method: 'GET', path: '/health' } },
      { expect: { status: 200, body: { status: 'ok' } } },
    )
    await expect(replay(t, 'http-inprocess')).resolves.toBeInstanceOf(Map)
  })

  it('an expect with nothing arriving on stdio (within 300) throws "nothing arrived"', async () => {
    const t = transcript(
      'inline/silence.jsonl',
      ACP,
      { note: 'the peer is never asked anything' },
      { expect: { id: 1 }, within: 300 },
    )
    const started = Date.now()
    const err = await rejection(replay(t, 'stdio', ECHO))
    expect(err).toBeInstanceOf(ReplayError)
    expect(err.message).toMatch(/^inline\/silence\.jsonl:3: expected \{"id":1\}, but nothing arrived within 300 ms/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
  })

  it('expectNone throws when something arrives', async () => {
    const t = transcript('inline/unexpected.jsonl', ACP, { send: INIT }, { expectNone: { ms: 2000 } })
    const err = await rejection(replay(t, 'stdio', ECHO))
    expect(err).toBeInstanceOf(ReplayError)
    expect(err.message).toMatch(
      /^inline\/unexpected\.jsonl:3: expected nothing for 2000 ms, received \{"jsonrpc":"2\.0","id":1/,
    )
  })

  it('a stdio peer that writes a non-JSON line to stdout is reported as a contract violation', async () => {
    const t = transcript(
      'inline/noisy.jsonl',
      ACP,
      { send: INIT },
      { expect: { jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } } },
      { closeInput: true },
      { expectExit: 0 },
    )
    const err = await rejection(replay(t, 'stdio', NOISY))
    expect(err).toBeInstanceOf(ReplayError)
    expect(err.message).toMatch(/^inline\/noisy\.jsonl: 1 contract violation\(s\) on stdio:/)
    expect(err.message).toContain('stdout carried a line that is not JSON — "hello"')
  })

  it('the same exchange with a quiet peer passes (control for the non-JSON stdout case)', async () => {
    const t = transcript(
      'inline/quiet.jsonl',
      ACP,
      { send: INIT },
      { expect: { jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } } },
      { closeInput: true },
      { expectExit: 0 },
    )
    await expect(replay(t, 'stdio', ECHO)).resolves.toBeInstanceOf(Map)
  })

  it('expectExit with the wrong code fails with both codes in the message', async () => {
    const t = transcript(
      'inline/exit.jsonl',
      { ...ACP, launch: ['3'] },
      { closeInput: true },
      { expectExit: 0, within: 5000 },
    )
    const err = await rejection(replay(t, 'stdio', ECHO))
    expect(err).toBeInstanceOf(ReplayError)
    expect(err.message).toMatch(/^inline\/exit\.jsonl:3: expected exit code 0, got 3$/)
  })

  it('expectExit with the right code passes (control)', async () => {
    const t = transcript('inline/exit3.jsonl', { ...ACP, launch: ['3'] }, { closeInput: true }, { expectExit: 3 })
    await expect(replay(t, 'stdio', ECHO)).resolves.toBeInstanceOf(Map)
  })

  it('a step limited to other arms is skipped', async () => {
    const t = transcript(
      'inline/arms.jsonl',
      { transcript: 1, title: 'arms filter', surface: 'http' },
      { send: { method: 'GET', path: '/health' } },
      { expect: { status: 500 }, arms: ['http-socket'] },
      { expect: { status: 200 } },
    )
    await expect(replay(t, 'http-inprocess')).resolves.toBeInstanceOf(Map)
  })
})

describe('conditional steps, other requirements and waits', () => {
  /** Replays `t` on the echo peer the way the kit does (an arm it started, options given). */
  async function kitReplay(
    t: ReturnType<typeof transcript>,
    o: Parameters<typeof replaySteps>[4],
  ): Promise<Map<string, unknown>> {
    const arm = new StdioArm(ECHO, t.header.launch ?? [], new AcpSniffer())
    const vars = new Map<string, unknown>()
    try {
      await replaySteps(t, arm, 'stdio', vars, o)
    } finally {
      await arm.dispose()
    }
    return vars
  }

  it('a step runs only when its `when` patterns match the captured values (and keeps their captures)', async () => {
    const t = transcript(
      'inline/when.jsonl',
      ACP,
      { send: INIT },
      { expect: { id: 1, result: { $capture: 'init' } } },
      { when: { init: { authMethods: { $contains: [{ id: { $capture: 'authId' } }] } } }, expect: { never: 'sent' } },
      {
        when: { init: { agentCapabilities: { auth: { logout: { $absent: true } } } } },
        send: { jsonrpc: '2.0', id: 2, method: 'x', params: { v: '${init}' } },
      },
      {
        when: { init: { protocolVersion: { $capture: 'pv' } } },
        expect: { id: 2, result: { protocolVersion: '${pv}' } },
      },
    )
    const vars = await kitReplay(t, {})
    expect(vars.get('pv')).toBe(1)
    expect(vars.has('authId')).toBe(false)
  })

  it('a `when` naming a value never captured skips the step', async () => {
    const t = transcript('inline/when-unset.jsonl', ACP, { when: { nothing: { $any: true } }, expect: { id: 9 } })
    await expect(kitReplay(t, {})).resolves.toBeInstanceOf(Map)
  })

  it('steps of another requirement run in the harness but the kit leaves them out', async () => {
    const t = transcript(
      'inline/other.jsonl',
      { ...ACP, id: 'acp.x.main', launch: ['3'] },
      { closeInput: true, requirement: 'acp.x.exit' },
      { expectExit: 0, requirement: 'acp.x.exit', within: 2000 },
    )
    await expect(kitReplay(t, { ownRequirementOnly: true })).resolves.toBeInstanceOf(Map)
    const err = await rejection(replay(t, 'stdio', ECHO))
    expect(err.message).toMatch(/expected exit code 0, got 3$/)
  })

  it("the run's wait overrides a shorter `within`, and the first answer gets the start-up grace", async () => {
    const t = transcript(
      'inline/waits.jsonl',
      ACP,
      { expect: { id: 1 }, within: 100 },
      { expect: { id: 2 }, within: 100 },
    )
    const started = Date.now()
    const err = await rejection(kitReplay(t, { waitMs: 400, startupGraceMs: 300 }))
    expect(err.message).toMatch(/^inline\/waits\.jsonl:2: expected \{"id":1\}, but nothing arrived within 400 ms/)
    expect(Date.now() - started).toBeGreaterThanOrEqual(650)
  })
})

describe('transcript parser', () => {
  const HEADER = '{"transcript":1,"title":"t","surface":"http"}'

  it('rejects a bad header with file:line (transcript version 2)', () => {
    expect(() => parseTranscript('{"transcript":2,"title":"t","surface":"http"}\n', 'x/bad-header.jsonl')).toThrow(
      /^x\/bad-header\.jsonl:1: bad header/,
    )
  })

  it('counts comment and blank lines before a bad header (unknown surface on line 3)', () => {
    expect(() =>
      parseTranscript('// a comment\n\n{"transcript":1,"title":"t","surface":"smtp"}\n', 'x/h.jsonl'),
    ).toThrow(/^x\/h\.jsonl:3: bad header/)
  })

  it('rejects a header with an unknown key', () => {
    expect(() => parseTranscript('{"transcript":1,"title":"t","surface":"http","extra":true}', 'x/h2.jsonl')).toThrow(
      /^x\/h2\.jsonl:1: bad header/,
    )
  })

  it('rejects a bad step with file:line (misspelt "sned" on line 4)', () => {
    const text = [HEADER, '{"send":{"path":"/health"}}', '', '{"sned":{"path":"/health"}}'].join('\n')
    expect(() => parseTranscript(text, 'x/bad-step.jsonl')).toThrow(/^x\/bad-step\.jsonl:4: bad step/)
  })

  it('rejects a step mixing two kinds (send with within)', () => {
    const text = [HEADER, '{"send":{"path":"/health"},"within":300}'].join('\n')
    expect(() => parseTranscript(text, 'x/mixed.jsonl')).toThrow(/^x\/mixed\.jsonl:2: bad step/)
  })

  it('rejects an empty step object', () => {
    expect(() => parseTranscript(`${HEADER}\n{}`, 'x/empty-step.jsonl')).toThrow(/^x\/empty-step\.jsonl:2: bad step/)
  })

  it('rejects a line that is not JSON with file:line', () => {
    expect(() => parseTranscript(`${HEADER}\n{"send":`, 'x/not-json.jsonl')).toThrow(/^x\/not-json\.jsonl:2: not JSON/)
  })

  it('rejects an empty transcript', () => {
    expect(() => parseTranscript('// only a comment\n\n', 'x/empty.jsonl')).toThrow(
      /^x\/empty\.jsonl: empty transcript/,
    )
  })

  it('gives every step its source line number', () => {
    const t = parseTranscript(
      [HEADER, '// comment', '{"send":{"path":"/a"}}', '', '{"expect":{"status":200}}'].join('\n'),
      'x/ok.jsonl',
    )
    expect(t.steps.map((s) => s.line)).toEqual([3, 5])
  })
})

describe('rawBytes', () => {
  it('a string is sent as its UTF-8 bytes', () => {
    expect(rawBytes('€\n')).toEqual(Buffer.from([0xe2, 0x82, 0xac, 0x0a]))
  })

  it('base64 is decoded to the exact bytes', () => {
    expect(rawBytes({ base64: Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0x0a]).toString('base64') })).toEqual(
      Buffer.from([0xef, 0xbb, 0xbf, 0xff, 0x0a]),
    )
  })

  it('{prefix, fill, bytes, suffix} produces exactly `bytes` bytes: prefix, fill, suffix', () => {
    const prefix = '{"type":"prompt","message":"'
    const suffix = '"}\n'
    const b = rawBytes({ prefix, fill: 'x', bytes: 1000, suffix })
    expect(b.length).toBe(1000)
    expect(b.subarray(0, prefix.length).toString('utf8')).toBe(prefix)
    expect(b.subarray(b.length - suffix.length).toString('utf8')).toBe(suffix)
    expect(b.subarray(prefix.length, b.length - suffix.length).every((c) => c === 0x78)).toBe(true)
  })

  it('a large fill (1 MiB + 24 bytes) is exact too', () => {
    expect(rawBytes({ prefix: '{"a":"', fill: 'x', bytes: 1048600, suffix: '"}\n' }).length).toBe(1048600)
  })

  it('a multi-byte fill still yields exactly `bytes` bytes', () => {
    expect(rawBytes({ prefix: 'a', fill: '€', bytes: 11, suffix: '\n' }).length).toBe(11)
  })

  it('defaults prefix and suffix to empty', () => {
    // Through the parser, so the schema defaults apply.
    const t = parseTranscript('{"transcript":1,"title":"t","surface":"acp"}\n{"sendRaw":{"fill":"ab","bytes":5}}')
    const step = t.steps[0]!
    if (!('sendRaw' in step)) throw new Error('not a sendRaw step')
    expect(rawBytes(step.sendRaw).toString('utf8')).toBe('ababa')
  })

  it('refuses prefix + suffix longer than `bytes` instead of producing more than `bytes` bytes', () => {
    // The step promises `bytes` bytes in all; 6 + 3 bytes of prefix and suffix cannot fit in 4.
    let out: Buffer | undefined
    let threw = false
    try {
      out = rawBytes({ prefix: 'abcdef', fill: 'x', bytes: 4, suffix: 'ghi' })
    } catch {
      threw = true
    }
    expect(threw, `produced ${out?.length} bytes for bytes: 4`).toBe(true)
  })
})

describe('an HTTP reply and the records of a stream open on another connection', () => {
  /** An arm whose stream delivers a record before the reply to the request that caused it. */
  function racingArm(withNextReply: boolean): Arm {
    const inbox = new Inbox<unknown>()
    return {
      name: 'sse-socket',
      send: () => {
        inbox.push({ event: 'cancelled', data: {} })
        inbox.push({ event: 'end', data: {} })
        inbox.push({ status: 204, headers: {}, body: undefined })
        return Promise.resolve()
      },
      sendRaw: () => Promise.resolve(),
      next: (ms) => inbox.next(ms),
      ...(withNextReply ? { nextReply: (ms: number) => inbox.nextWhere((i) => 'status' in (i as object), ms) } : {}),
      violations: () => [],
      dispose: () => Promise.resolve(),
    }
  }
  const t = transcript(
    'inline/race.jsonl',
    { transcript: 1, title: 'a cancel and its stream', surface: 'sse' },
    { send: { method: 'POST', path: '/sessions/s/cancel' } },
    { expect: { status: 204 } },
    { expect: { event: 'cancelled' } },
    { expect: { event: 'end' } },
  )

  it('the expected reply is taken when it comes; the records before it stay for the next expectations', async () => {
    await expect(replaySteps(t, racingArm(true), 'sse-socket', new Map(), { waitMs: 500 })).resolves.toBeUndefined()
  })

  it('an unordered reply and record: the reply is taken when it comes, the records in any order', async () => {
    const u = transcript(
      'inline/race-unordered.jsonl',
      { transcript: 1, title: 'a cancel and its stream, unordered', surface: 'sse' },
      { send: { method: 'POST', path: '/sessions/s/cancel' } },
      { expectUnordered: [{ event: 'cancelled' }, { status: 204 }] },
      { expect: { event: 'end' } },
    )
    await expect(replaySteps(u, racingArm(true), 'sse-socket', new Map(), { waitMs: 500 })).resolves.toBeUndefined()
    const err = await rejection(replaySteps(u, racingArm(false), 'sse-socket', new Map(), { waitMs: 500 }))
    expect(err.message).toMatch(/^inline\/race-unordered\.jsonl:3: received \{"event":"end"/)
  })

  it('without a way to wait for the reply, the record that came first is a mismatch (control)', async () => {
    const err = await rejection(replaySteps(t, racingArm(false), 'sse-socket', new Map(), { waitMs: 500 }))
    expect(err.message).toMatch(/^inline\/race\.jsonl:3: received \{"event":"cancelled"/)
  })
})
