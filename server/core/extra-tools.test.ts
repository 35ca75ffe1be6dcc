/**
 * The per-session extra-tools hook (`Session.useExtraTools`, how an ACP client's MCP tools
 * reach the agent): offered to the model with their own schema, their arguments checked by
 * their contract, their default rule `ask` under the approval policy (auto asks, read-only
 * refuses), permission rules and allow-list entries by pattern (`mcp__<server>`, `mcp__*`), plan mode, and no way to
 * replace a built-in.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Tool, ToolContract } from '../tools/types.ts'
import { ofType, testEnv, waitForType, within, type TestEnv } from './fixtures/harness.ts'
import { parsePermissionFlags } from './permissions.ts'
import { toolAllowed } from './tool-patterns.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-extra-tools-')
})
afterEach(async () => {
  await env.cleanup()
})

const contract: ToolContract = {
  description: 'Echo the text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  permission: 'ask',
  parse: (a) =>
    a && typeof (a as { text?: unknown }).text === 'string'
      ? { ok: true, args: a }
      : { ok: false, error: 'text: expected a string' },
}

function echo(name: string): Tool {
  return {
    name,
    contract,
    permissionKey: (a: { text: string }) => a.text,
    run: async (a: { text: string }) => ({ ok: true, output: `echo: ${a.text}` }),
  }
}

const extras = (...names: string[]) => new Map(names.map((n) => [n, echo(n)]))

describe('extra tools of a session', () => {
  it('are offered with their own schema, run, and check their arguments', async () => {
    const session = await env.manager().create({ approval: 'allow' })
    session.useExtraTools(extras('mcp__fx__echo'))
    const offered = session.availableTools().find((t) => t.name === 'mcp__fx__echo')
    expect(offered).toEqual({
      name: 'mcp__fx__echo',
      description: 'Echo the text back',
      input_schema: contract.inputSchema,
    })
    await within(
      session.prompt('!call mcp__fx__echo {"text":"hi"}\n!call mcp__fx__echo {"text":3}').done,
      5000,
      'the turn',
    )
    const results = ofType(await session.events(), 'tool_result').map((r) => r.data)
    expect(results[0]).toMatchObject({ ok: true, output: 'echo: hi' })
    expect(results[1]).toMatchObject({
      ok: false,
      error: 'invalid arguments for mcp__fx__echo: text: expected a string',
    })
    session.useExtraTools(undefined)
    expect(session.availableTools().some((t) => t.name === 'mcp__fx__echo')).toBe(false)
  })

  it('never replace a built-in, and need a contract', async () => {
    const session = await env.manager().create()
    session.useExtraTools(
      new Map([
        ['Read', echo('Read')],
        [
          'mcp__fx__bare',
          { name: 'mcp__fx__bare', permissionKey: () => '', run: async () => ({ ok: true, output: '' }) },
        ],
      ]),
    )
    expect(session.tools.get('Read')!.contract).toBeUndefined()
    expect(session.availableTools().map((t) => t.name)).not.toContain('mcp__fx__bare')
  })

  it('ask by default: the auto preset asks, read-only refuses', async () => {
    const asking = await env.manager().create({ approval: 'auto' })
    asking.useExtraTools(extras('mcp__fx__echo'))
    const turn = asking.prompt('!call mcp__fx__echo {"text":"hi"}')
    const req = await waitForType(asking, 'permission_request')
    expect(req.data).toMatchObject({ tool: 'mcp__fx__echo', risk: 'medium' })
    asking.replyPermission(req.data.request_id, 'allow', 'test')
    await within(turn.done, 5000, 'the turn')
    expect(ofType(await asking.events(), 'tool_result')[0]!.data).toMatchObject({ ok: true })

    const ro = await env.manager().create({ approval: 'read-only' })
    ro.useExtraTools(extras('mcp__fx__echo'))
    await within(ro.prompt('!call mcp__fx__echo {"text":"hi"}').done, 5000, 'the turn')
    expect(ofType(await ro.events(), 'tool_result')[0]!.data).toMatchObject({
      ok: false,
      error: expect.stringMatching(/needs approval/),
    })
  })

  it('follow the allow-list (exact names and mcp__ patterns) and plan mode', async () => {
    const m = env.manager()
    const names = async (allowedTools?: string[], mode?: string) => {
      const s = await m.create({ ...(allowedTools ? { allowedTools } : {}), ...(mode ? { mode } : {}) })
      s.useExtraTools(extras('mcp__fx__echo', 'mcp__other__echo'))
      return s
        .availableTools()
        .map((t) => t.name)
        .filter((n) => n.startsWith('mcp__'))
    }
    expect(await names()).toEqual(['mcp__fx__echo', 'mcp__other__echo'])
    expect(await names(['Read'])).toEqual([])
    expect(await names(['Read', 'mcp__fx'])).toEqual(['mcp__fx__echo'])
    expect(await names(['mcp__fx__*'])).toEqual(['mcp__fx__echo'])
    expect(await names(['mcp__other__echo'])).toEqual(['mcp__other__echo'])
    expect(await names(['mcp__*'])).toEqual(['mcp__fx__echo', 'mcp__other__echo'])
    expect(await names(undefined, 'plan')).toEqual([])
    await expect(m.create({ allowedTools: ['mcp__'] })).rejects.toThrow(/unknown tool/)
  })

  it('follow permission rules that name them exactly or by pattern (the most specific wins)', async () => {
    const m = env.manager({
      permissionOverrides: parsePermissionFlags(['mcp__*=deny,mcp__fx=allow,mcp__fx__danger=deny']),
    })
    const s = await m.create({ approval: 'ask' })
    s.useExtraTools(extras('mcp__fx__echo', 'mcp__fx__danger', 'mcp__other__echo'))
    await within(
      s.prompt(
        '!call mcp__fx__echo {"text":"a"}\n!call mcp__fx__danger {"text":"b"}\n!call mcp__other__echo {"text":"c"}',
      ).done,
      5000,
      'the turn',
    )
    const results = ofType(await s.events(), 'tool_result').map((r) => [r.data.tool, r.data.ok])
    expect(results).toEqual([
      ['mcp__fx__echo', true],
      ['mcp__fx__danger', false],
      ['mcp__other__echo', false],
    ])
    expect(ofType(await s.events(), 'permission_request')).toEqual([])
    expect(() => parsePermissionFlags(['mcp_x=allow'])).toThrow(/unknown tool "mcp_x"/)
  })

  it('pattern matching does not confuse servers that share a prefix', () => {
    expect(toolAllowed('mcp__fxx__echo', ['mcp__fx'])).toBe(false)
    expect(toolAllowed('mcp__fx__echo', ['mcp__fx__ech'])).toBe(false)
    expect(toolAllowed('Read', ['mcp__*'])).toBe(false)
  })
})

describe("a client's substitutes for the built-ins (useTools, useToolsIfFree, releaseTools)", () => {
  /** A Read that answers `who`: which client's file system served it. */
  const reader = (who: string): ReadonlyMap<string, Tool> =>
    new Map([['Read', { ...echo('Read'), run: async () => ({ ok: true, output: who }) }]])
  const readWith = async (session: { tools: ReadonlyMap<string, Tool> }) => {
    const result = await session.tools.get('Read')!.run({ text: 'x' }, {} as never)
    return result.ok ? result.output : result
  }

  it("a second client does not take the first one's, and gives back only its own", async () => {
    const session = await env.manager().create({ approval: 'allow' })
    const editor = reader('editor')
    const remote = reader('remote')
    session.useTools(editor)
    expect(session.useToolsIfFree(remote)).toBe(false)
    expect(await readWith(session)).toBe('editor')
    session.releaseTools(remote)
    expect(await readWith(session)).toBe('editor')
    session.releaseTools(editor)
    expect(session.useToolsIfFree(remote)).toBe(true)
    expect(await readWith(session)).toBe('remote')
    // An editor attaching later takes its place; the remote client leaving then changes nothing.
    session.useTools(editor)
    session.releaseTools(remote)
    expect(await readWith(session)).toBe('editor')
  })
})
