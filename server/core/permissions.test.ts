/**
 * Permissions: every row of the decision table in permissions.ts through a real turn, the
 * pending-request flow (`permission_request` → the turn waits → `replyPermission` →
 * `permission_reply`), `always` / `never` remembered across a restart for the same arguments
 * only, a cancelled turn releasing its request, and rule resolution (defaults < project config
 * < command-line overrides) with its error messages.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { eventlogRoot } from '../store/paths.ts'
import type { AnyEvent, EventOf } from '../events/event-types.ts'
import type { ManagerOptions } from './manager.ts'
import { FileAuditStore } from '../store/audit-store.ts'
import {
  PermissionAuditLog,
  parsePermissionFlags,
  resolveRules,
  type ApprovalPolicy,
  type Rule,
} from './permissions.ts'
import type { Session } from './session.ts'
import {
  last,
  ofType,
  sleep,
  testEnv,
  typesOf,
  waitForEvent,
  waitForType,
  within,
  type TestEnv,
} from './fixtures/harness.ts'

const rules = (...entries: [string, Rule][]): Map<string, Rule> => new Map(entries)

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-perm-')
})
afterEach(async () => {
  await env.cleanup()
})

const auditPath = (home: string): string => join(home, 'permissions', 'audit.jsonl')
const auditLog = (home: string): PermissionAuditLog => new PermissionAuditLog(new FileAuditStore(auditPath(home)))
const writeCall = (path: string, content = 'hi'): string => `!call Write ${JSON.stringify({ path, content })}`

async function session(opts: Partial<ManagerOptions> = {}, approval?: ApprovalPolicy): Promise<Session> {
  return env.manager(opts).create(approval ? { approval } : {})
}

/** Run a prompt that needs no answer to its end; its events. */
async function run(s: Session, prompt: string): Promise<AnyEvent[]> {
  const before = s.lastSeq
  await within(s.prompt(prompt).done, 6000, 'the turn')
  return s.events(before)
}

function onlyResult(events: AnyEvent[]): EventOf<'tool_result'> {
  const results = ofType(events, 'tool_result')
  expect(results).toHaveLength(1)
  expect(last(events).type).toBe('agent_result')
  return results[0]!
}

describe('the decision table', () => {
  it('rule allow: runs, without asking, whatever the approval policy', async () => {
    const s = await session({ permissionOverrides: rules(['Write', 'allow']) }, 'deny')
    const events = await run(s, writeCall('out.txt', 'allowed'))
    expect(onlyResult(events).data.ok).toBe(true)
    expect(readFileSync(join(env.cwd, 'out.txt'), 'utf8')).toBe('allowed')
    expect(ofType(events, 'permission_request')).toHaveLength(0)
  })

  it('rule deny: a tool error, without asking, whatever the approval policy', async () => {
    const s = await session({ permissionOverrides: rules(['Write', 'deny'], ['Read', 'deny']) }, 'allow')
    const events = await run(s, `${writeCall('out.txt')}\n!call Read {"path":"out.txt"}`)
    const results = ofType(events, 'tool_result')
    expect(results.map((r) => [r.data.tool, r.data.ok, r.data.error])).toEqual([
      ['Write', false, 'Write is denied by the permission rules'],
      ['Read', false, 'Read is denied by the permission rules'],
    ])
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
    expect(ofType(events, 'permission_request')).toHaveLength(0)
  })

  it('ask + audit log "always": runs without asking, even with approval deny', async () => {
    await auditLog(env.home).record({
      session_id: 'earlier',
      cwd: env.cwd,
      tool: 'Write',
      key: join(env.cwd, 'out.txt'),
      decision: 'always',
    })
    const s = await session({}, 'deny')
    const events = await run(s, writeCall('out.txt', 'remembered'))
    expect(onlyResult(events).data.ok).toBe(true)
    expect(readFileSync(join(env.cwd, 'out.txt'), 'utf8')).toBe('remembered')
    expect(ofType(events, 'permission_request')).toHaveLength(0)
  })

  it('an "always" recorded in another project does not approve the same call here', async () => {
    const elsewhere = join(env.home, 'other-project')
    mkdirSync(elsewhere, { recursive: true })
    await auditLog(env.home).record({
      session_id: 'earlier',
      cwd: elsewhere,
      tool: 'Write',
      key: join(env.cwd, 'out.txt'),
      decision: 'always',
    })
    const s = await session({}, 'deny')
    const r = onlyResult(await run(s, writeCall('out.txt')))
    expect(r.data.ok).toBe(false)
    expect(r.data.error).toMatch(/Write needs approval/)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
  })

  it('ask + audit log "never": a tool error without asking, even with approval allow', async () => {
    await auditLog(env.home).record({
      session_id: 'earlier',
      cwd: env.cwd,
      tool: 'Write',
      key: join(env.cwd, 'out.txt'),
      decision: 'never',
    })
    const s = await session({}, 'allow')
    const r = onlyResult(await run(s, writeCall('out.txt')))
    expect(r.data.ok).toBe(false)
    expect(r.data.error).toMatch(/Write was denied earlier with "never"/)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
  })

  it('ask + no record + approval allow (the default): runs without asking', async () => {
    const s = await session()
    expect(s.approval).toBe('allow')
    const events = await run(s, writeCall('out.txt'))
    expect(onlyResult(events).data.ok).toBe(true)
    expect(ofType(events, 'permission_request')).toHaveLength(0)
  })

  it('ask + no record + approval deny: a tool error "needs approval"', async () => {
    const s = await session({ approval: 'deny' })
    const r = onlyResult(await run(s, writeCall('out.txt')))
    expect(r.data.ok).toBe(false)
    expect(r.data.error).toMatch(/Write needs approval/)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
  })

  it('ask + no record + approval ask: a pending request', async () => {
    const s = await session({}, 'ask')
    const { done } = s.prompt(writeCall('out.txt'))
    const req = await waitForType(s, 'permission_request')
    expect(s.replyPermission(req.data.request_id, 'allow', 'test')).toBe(true)
    await within(done, 5000, 'the turn')
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(true)
  })
})

describe('a pending permission request', () => {
  /** Start a Write that asks; resolves once the request is persisted. */
  async function pending(s: Session, path = 'out.txt') {
    const { done } = s.prompt(writeCall(path, 'content'))
    const request = await waitForType(s, 'permission_request')
    return { done, request }
  }

  it('carries the call, the tool, its arguments and the four options; the turn waits for the answer', async () => {
    const s = await session({}, 'ask')
    const { done, request } = await pending(s)
    const call = ofType(await s.events(), 'tool_call')[0]!
    expect(request.data).toEqual({
      request_id: expect.stringMatching(/^perm-/),
      call_id: call.data.call_id,
      tool: 'Write',
      args: { path: 'out.txt', content: 'content' },
      risk: 'medium',
      options: ['allow', 'always', 'deny', 'never'],
      old_text: null,
    })
    expect(s.pendingPermissions()).toEqual([request.data.request_id])

    // Nothing moves until someone answers.
    await sleep(300)
    expect(s.status).toBe('running')
    expect(last(await s.events()).seq).toBe(request.seq)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)

    expect(s.replyPermission(request.data.request_id, 'allow', 'test')).toBe(true)
    expect(s.replyPermission(request.data.request_id, 'allow', 'test')).toBe(false)
    await within(done, 5000, 'the turn')
    const events = await s.events()
    const types = typesOf(events)
    expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('permission_request'))
    expect(types.indexOf('permission_request') + 1).toBe(types.indexOf('permission_reply'))
    expect(types.indexOf('permission_reply')).toBeLessThan(types.indexOf('tool_result'))
    expect(ofType(events, 'permission_reply')[0]!.data).toEqual({
      request_id: request.data.request_id,
      decision: 'allow',
      source: 'test',
    })
    expect(ofType(events, 'tool_result')[0]!.data.ok).toBe(true)
    expect(readFileSync(join(env.cwd, 'out.txt'), 'utf8')).toBe('content')
    expect(s.pendingPermissions()).toEqual([])
    // "allow" is once: nothing is remembered.
    expect(existsSync(auditPath(env.home))).toBe(false)
  })

  it('rates a Bash call by what the command does: read-only low, unknown medium, destructive high', async () => {
    const s = await session({}, 'ask')
    for (const [command, risk] of [
      ['echo hi', 'low'],
      ['make build', 'medium'],
      ['rm -rf build', 'high'],
    ] as const) {
      const { done } = s.prompt(`!call Bash ${JSON.stringify({ command })}`)
      const request = await waitForEvent(s, (e) => e.type === 'permission_request' && e.data.args.command === command)
      expect(request.data).toMatchObject({ tool: 'Bash', args: { command }, risk })
      s.replyPermission((request as EventOf<'permission_request'>).data.request_id, 'deny', 'test')
      await within(done, 5000, 'the turn')
    }
  })

  it('deny fails the call', async () => {
    const s = await session({}, 'ask')
    const { done, request } = await pending(s)
    s.replyPermission(request.data.request_id, 'deny', 'http')
    await within(done, 5000, 'the turn')
    const events = await s.events()
    expect(ofType(events, 'permission_reply')[0]!.data).toEqual({
      request_id: request.data.request_id,
      decision: 'deny',
      source: 'http',
    })
    const r = onlyResult(events)
    expect(r.data.ok).toBe(false)
    expect(r.data.error).toBe('permission denied for Write')
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
    expect(existsSync(auditPath(env.home))).toBe(false)
  })

  it('always runs the call and, after a restart, the same call runs without asking; other arguments still ask', async () => {
    const first = await session({}, 'ask')
    const { done, request } = await pending(first)
    first.replyPermission(request.data.request_id, 'always', 'test')
    await within(done, 5000, 'the turn')
    expect(onlyResult(await first.events()).data.ok).toBe(true)
    const records = readFileSync(auditPath(env.home), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(records).toEqual([
      {
        ts: expect.any(String),
        session_id: first.id,
        cwd: env.cwd,
        tool: 'Write',
        key: join(env.cwd, 'out.txt'),
        decision: 'always',
      },
    ])

    // A new manager on the same home: the server restarted.
    const again = await session({}, 'ask')
    const events = await run(again, writeCall('./out.txt', 'second'))
    expect(ofType(events, 'permission_request')).toHaveLength(0)
    expect(onlyResult(events).data.ok).toBe(true)
    expect(readFileSync(join(env.cwd, 'out.txt'), 'utf8')).toBe('second')

    const other = again.prompt(writeCall('other.txt'))
    const asked = await waitForType(again, 'permission_request')
    expect(asked.data.args).toEqual({ path: 'other.txt', content: 'hi' })
    again.replyPermission(asked.data.request_id, 'deny', 'test')
    await within(other.done, 5000, 'the turn')
    expect(existsSync(join(env.cwd, 'other.txt'))).toBe(false)
  })

  it('never fails the call and, after a restart, the same call fails without asking; other arguments still ask', async () => {
    const first = await session({}, 'ask')
    const { done, request } = await pending(first)
    first.replyPermission(request.data.request_id, 'never', 'test')
    await within(done, 5000, 'the turn')
    const r1 = onlyResult(await first.events())
    expect(r1.data.ok).toBe(false)
    expect(r1.data.error).toBe('permission denied (never) for Write')

    const again = await session({}, 'ask')
    const events = await run(again, writeCall('out.txt', 'other content, same path'))
    expect(ofType(events, 'permission_request')).toHaveLength(0)
    const r2 = onlyResult(events)
    expect(r2.data.ok).toBe(false)
    expect(r2.data.error).toMatch(/denied earlier with "never"/)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)

    const other = again.prompt(writeCall('other.txt'))
    const asked = await waitForType(again, 'permission_request')
    again.replyPermission(asked.data.request_id, 'allow', 'test')
    await within(other.done, 5000, 'the turn')
    expect(existsSync(join(env.cwd, 'other.txt'))).toBe(true)
  })

  it('a later decision for the same call overrides an earlier one', async () => {
    const log = auditLog(env.home)
    await log.record({ session_id: 'a', cwd: env.cwd, tool: 'Bash', key: 'echo hi', decision: 'never' })
    await log.record({ session_id: 'b', cwd: env.cwd, tool: 'Bash', key: 'echo hi', decision: 'always' })
    appendFileSync(auditPath(env.home), '{"ts":"torn') // a crash mid-append
    const reread = auditLog(env.home)
    expect(await reread.lookup(env.cwd, 'Bash', 'echo hi')).toBe('always')
    expect(await reread.lookup(env.cwd, 'Bash', 'echo other')).toBeUndefined()
    // Scoped by working directory: approving a command in one project does not approve it in another.
    expect(await reread.lookup(join(env.base, 'another-project'), 'Bash', 'echo hi')).toBeUndefined()
    // The Bash key is the trimmed command.
    const s = await session({ sandbox: 'danger-full-access' }, 'ask')
    const events = await run(s, '!call Bash {"command":"  echo hi  "}')
    expect(ofType(events, 'permission_request')).toHaveLength(0)
    expect(onlyResult(events).data).toMatchObject({ ok: true, output: 'hi\n' })
  })

  it('a cancelled turn releases its pending request', async () => {
    const s = await session({}, 'ask')
    const { done, request } = await pending(s)
    expect(s.cancel()).toBe(true)
    const outcome = await within(done, 3000, 'the cancelled turn')
    expect(outcome.stop_reason).toBe('cancelled')
    const events = await s.events()
    expect(ofType(events, 'permission_reply')[0]!.data).toEqual({
      request_id: request.data.request_id,
      decision: 'cancelled',
      source: 'cancel',
    })
    const results = ofType(events, 'tool_result')
    expect(results).toHaveLength(1)
    expect(results[0]!.data.ok).toBe(false)
    expect(results[0]!.data.error).toMatch(/cancelled/)
    expect(typesOf(events).slice(-2)).toEqual(['turn_end', 'cancelled'])
    expect(s.pendingPermissions()).toEqual([])
    expect(s.replyPermission(request.data.request_id, 'allow', 'test')).toBe(false)
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(false)
    expect(existsSync(auditPath(env.home))).toBe(false)
  })

  it('replyPermission for an unknown request id returns false', async () => {
    const s = await session({}, 'ask')
    expect(s.replyPermission('perm-nope', 'allow', 'test')).toBe(false)
  })

  it('setApproval switches the policy mid-session and records it', async () => {
    const s = await session()
    await s.setApproval('ask')
    expect(last(await s.events())).toMatchObject({ type: 'approval_changed', data: { old: 'allow', new: 'ask' } })
    const { done } = s.prompt(writeCall('out.txt'))
    const req = await waitForType(s, 'permission_request')
    s.replyPermission(req.data.request_id, 'allow', 'test')
    await within(done, 5000, 'the turn')
    expect(existsSync(join(env.cwd, 'out.txt'))).toBe(true)
  })
})

describe('resolveRules', () => {
  const config = (value: unknown): void => {
    mkdirSync(join(env.cwd, '.chimera'), { recursive: true })
    writeFileSync(join(env.cwd, '.chimera', 'config.json'), typeof value === 'string' ? value : JSON.stringify(value))
  }
  const asObject = (m: Map<string, Rule>): Record<string, Rule> => Object.fromEntries(m)

  it('defaults come from the tool specs: read-only tools allow, the others ask', () => {
    expect(asObject(resolveRules({ cwd: env.cwd }))).toEqual({
      Read: 'allow',
      Write: 'ask',
      Edit: 'ask',
      Bash: 'ask',
      Grep: 'allow',
      Glob: 'allow',
      list_files: 'allow',
      update_plan: 'allow',
      open_file: 'allow',
      lsp_diagnostics: 'allow',
      lsp_completion: 'allow',
      lsp_rename: 'ask',
      lsp_definition: 'allow',
      lsp_references: 'allow',
    })
  })

  it('project config beats the defaults, command-line overrides beat both', () => {
    config({ permission: { Write: 'allow', Bash: 'deny', Read: 'ask' } })
    expect(asObject(resolveRules({ cwd: env.cwd }))).toMatchObject({
      Write: 'allow',
      Bash: 'deny',
      Read: 'ask',
      Edit: 'ask',
      Grep: 'allow',
    })
    const rules = resolveRules({
      cwd: env.cwd,
      overrides: new Map([
        ['Bash', 'allow'],
        ['Edit', 'deny'],
      ] as const),
    })
    expect(asObject(rules)).toMatchObject({ Write: 'allow', Bash: 'allow', Read: 'ask', Edit: 'deny', Grep: 'allow' })
  })

  it('a config without "permission" keeps the defaults', () => {
    config({ model: 'offline' })
    expect(resolveRules({ cwd: env.cwd }).get('Write')).toBe('ask')
  })

  it('the project config applies to the sessions of that workspace', async () => {
    config({ permission: { Write: 'deny' } })
    const r = onlyResult(await run(await session(), writeCall('out.txt')))
    expect(r.data).toMatchObject({ ok: false, error: 'Write is denied by the permission rules' })
  })

  it('malformed config and bad rule values are clear errors', async () => {
    const cfg = join(env.cwd, '.chimera', 'config.json')
    config('{"permission": {')
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(`${cfg}: not valid JSON`)
    // A session on that workspace is refused before anything is stored.
    await expect(env.manager().create()).rejects.toThrow(`${cfg}: not valid JSON`)
    expect(existsSync(eventlogRoot(env.home))).toBe(false)

    config({ permission: 'allow' })
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(
      `${cfg}: "permission" must be an object of tool → allow|ask|deny`,
    )
    config({ permission: null })
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(/"permission" must be an object/)
    config({ permission: { Bash: 'maybe' } })
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(
      `${cfg}: permission for Bash must be allow, ask or deny, got "maybe"`,
    )
    config({ permission: { Bash: true } })
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(/permission for Bash must be allow, ask or deny, got true/)
  })

  it('an array for "permission" is refused as not an object', () => {
    // Arrays pass `typeof === 'object'`: ["allow"] would otherwise set a rule for a tool named "0".
    config({ permission: ['allow'] })
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(/"permission" must be an object/)
  })
})

describe('parsePermissionFlags', () => {
  it('parses comma-separated and repeated Tool=rule entries', () => {
    const flags = (v: string[]) => Object.fromEntries(parsePermissionFlags(v))
    expect(flags(['Bash=allow,Write=deny'])).toEqual({ Bash: 'allow', Write: 'deny' })
    expect(flags(['Bash=allow', ' Write=ask , Edit=deny ,'])).toEqual({ Bash: 'allow', Write: 'ask', Edit: 'deny' })
    expect(flags(['Bash=allow', 'Bash=deny'])).toEqual({ Bash: 'deny' })
    expect(flags([])).toEqual({})
  })

  it('rejects names that are only inherited object properties (toString, constructor, hasOwnProperty)', () => {
    for (const name of ['toString', 'constructor', 'hasOwnProperty', '__proto__']) {
      expect(() => parsePermissionFlags([`${name}=allow`])).toThrow(/unknown tool/)
    }
    mkdirSync(join(env.cwd, '.chimera'), { recursive: true })
    writeFileSync(join(env.cwd, '.chimera', 'config.json'), '{"permission":{"constructor":"allow"}}')
    expect(() => resolveRules({ cwd: env.cwd })).toThrow(/unknown tool "constructor"/)
  })

  it('rejects a bad rule or a malformed entry', () => {
    expect(() => parsePermissionFlags(['Bash=maybe'])).toThrow(
      '--permission expects Tool=allow|ask|deny, got "Bash=maybe"',
    )
    expect(() => parsePermissionFlags(['Bash=allow,Write=maybe'])).toThrow(/got "Write=maybe"/)
    expect(() => parsePermissionFlags(['Bash'])).toThrow(/got "Bash"/)
    expect(() => parsePermissionFlags(['=allow'])).toThrow(/got "=allow"/)
    expect(() => parsePermissionFlags(['Bash=ALLOW'])).toThrow(/got "Bash=ALLOW"/)
  })

  it('rejects an entry with more than one "="', () => {
    expect(() => parsePermissionFlags(['Bash=allow=deny'])).toThrow(/got "Bash=allow=deny"/)
  })
})
