/**
 * Command and agent definition files are read like the file tools' files
 * (docs/decisions/0022-verified-opens.md): a `.opencode/command/leak.md` the model's Bash made a
 * symlink to a host file, a `.opencode/command` directory linked out of the project, or a link
 * into CHIMERA_HOME is never followed — on any route that shows a command: the core's `/leak`
 * prompt (RPC, HTTP and ACP prompts), `GET /commands`, `POST /commands/{name}/invoke` and ACP's
 * `available_commands_update`. A symlink that stays inside the project still works.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createHttpClient } from '../../client/index.ts'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'
import { serveAcp } from '../acp/serve-acp.ts'
import { AgentDefinitionError, loadAgentDefinition } from '../agents/agent-definitions.ts'
import { testEnv, within } from '../core/fixtures/harness.ts'
import { createLogger } from '../log.ts'
import { CustomCommands, customCommands } from './custom-commands.ts'
import { loadFrontmatterParser } from './frontmatter.ts'

// Command and agent files are read synchronously once the YAML parser is loaded (the manager and the routes load it).
beforeAll(() => loadFrontmatterParser())

const SECRET = 'TOP-SECRET-host-file-contents'
let base: string
let cwd: string
let userDir: string
let outside: string
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-defs-')))
  cwd = join(base, 'project')
  userDir = join(base, 'user-commands')
  outside = join(base, 'outside')
  mkdirSync(join(cwd, '.opencode', 'command'), { recursive: true })
  mkdirSync(userDir)
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.md'), `${SECRET}\n`)
  writeFileSync(join(outside, 'leak.md'), `${SECRET}\n`)
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const cmdDir = () => join(cwd, '.opencode', 'command')
const commands = (env: NodeJS.ProcessEnv = { CHIMERA_HOME: join(base, 'home') }) =>
  new CustomCommands({ cwd, userDir, env })
const leaks = (v: unknown) => JSON.stringify(v).includes(SECRET)

describe('command files are read only inside the project', () => {
  it('a command file linked to a host file is not read (list, render, invoke)', () => {
    symlinkSync(join(outside, 'secret.md'), join(cmdDir(), 'leak.md'))
    const c = commands()
    const listed = c.list()
    expect(listed.commands.map((x) => x.name)).not.toContain('leak')
    expect(listed.problems).toEqual([
      { source: join(cmdDir(), 'leak.md'), error: expect.stringMatching(/^not read: .*leads outside/) },
    ])
    expect(leaks(listed)).toBe(false)
    // Not even where the link leads: the list reaches HTTP clients.
    expect(JSON.stringify(listed)).not.toContain(outside)
    expect(c.render('leak', '')).toBeUndefined()
    expect(() => c.invoke('leak', { session_id: 's' })).toThrow(/no command named/)
  })

  it('a command directory linked out of the project is not listed or read', () => {
    rmSync(cmdDir(), { recursive: true })
    symlinkSync(outside, cmdDir())
    const c = commands()
    const listed = c.list()
    expect(listed.commands).toEqual([])
    expect(listed.problems?.[0]?.error).toMatch(/^not read: .*leads outside/)
    expect(leaks(listed)).toBe(false)
    // Not even where the link leads: the list reaches HTTP clients.
    expect(JSON.stringify(listed)).not.toContain(outside)
    expect(c.render('leak', '')).toBeUndefined()
  })

  it('a link into CHIMERA_HOME inside the project is not read, a link inside the project is', () => {
    const home = join(cwd, '.chimera')
    mkdirSync(home)
    writeFileSync(join(home, 'token.md'), `${SECRET}\n`)
    symlinkSync(join(home, 'token.md'), join(cmdDir(), 'home.md'))
    writeFileSync(join(cwd, 'shared.md'), 'Shared template $1\n')
    symlinkSync(join(cwd, 'shared.md'), join(cmdDir(), 'shared.md'))
    const c = commands({ CHIMERA_HOME: home })
    const listed = c.list()
    expect(listed.commands.map((x) => x.name)).toEqual(['shared'])
    expect(listed.problems?.[0]?.error).toMatch(/CHIMERA_HOME/)
    expect(c.render('home', '')).toBeUndefined()
    expect(c.render('shared', 'x')).toBe('Shared template x')
  })

  it('an agent file linked out of the project is an error, not read', () => {
    mkdirSync(join(cwd, '.opencode', 'agent'))
    symlinkSync(join(outside, 'secret.md'), join(cwd, '.opencode', 'agent', 'spy.md'))
    let err: unknown
    try {
      loadAgentDefinition('spy', { cwd, userDir: join(base, 'agents'), env: { CHIMERA_HOME: join(base, 'home') } })
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(AgentDefinitionError)
    expect((err as Error).message).toMatch(/^not read: .*leads outside/)
    expect((err as Error).message).not.toContain(SECRET)
  })
})

describe('every route that shows a command', () => {
  let target: ServerTarget | undefined
  afterEach(async () => {
    await target?.close()
    target = undefined
  })

  it('GET /commands, POST /commands/leak/invoke and a /leak prompt do not follow the link', async () => {
    target = inProcessTarget({ commands: customCommands({ userDir }) })
    mkdirSync(join(target.cwd, '.opencode'))
    symlinkSync(outside, join(target.cwd, '.opencode', 'command'))
    const api = createHttpClient({ baseUrl: target.baseUrl, fetch: target.fetch })
    const list = await api.GET('/commands')
    expect(list.response.status).toBe(200)
    expect(leaks(list.data)).toBe(false)
    expect(list.data?.commands).toEqual([])
    const id = (await api.POST('/session', { body: {} })).data!.session_id
    const inv = await api.POST('/commands/{name}/invoke', {
      params: { path: { name: 'leak' } },
      body: { session_id: id },
    })
    expect(inv.response.status).toBe(404)
    expect(leaks(inv.error)).toBe(false)
    // The core's `/leak` prompt (what RPC, HTTP and ACP prompts run): sent to the model as typed.
    const session = target.server.deps.manager.peek(id)!
    const out = await within(session.prompt('/leak').done, 10_000, '/leak')
    expect(out.output).toBe('offline model: no provider is configured. You said: /leak')
  })

  it("ACP's available_commands_update does not list a linked command", async () => {
    const env = testEnv('chimera-defs-acp-')
    try {
      mkdirSync(join(env.cwd, '.opencode', 'command'), { recursive: true })
      symlinkSync(join(outside, 'secret.md'), join(env.cwd, '.opencode', 'command', 'leak.md'))
      writeFileSync(join(env.cwd, '.opencode', 'command', 'fine.md'), 'A fine command\n')
      const input = new PassThrough()
      const output = new PassThrough()
      let text = ''
      output.setEncoding('utf8').on('data', (d: string) => void (text += d))
      const done = serveAcp({
        agent: 'otter',
        version: '0.0.0',
        input,
        output,
        logger: createLogger({ level: 'error', sink: () => {} }),
        manager: env.manager({ commands: customCommands({ userDir }) }),
      })
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`,
      )
      input.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: env.cwd, mcpServers: [] } })}\n`,
      )
      const update = await within(
        new Promise<Record<string, any>>((resolve) => {
          const look = (): void => {
            const m = text
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l))
              .find((f) => f.params?.update?.sessionUpdate === 'available_commands_update')
            if (m) resolve(m)
            else setTimeout(look, 20)
          }
          look()
        }),
        8000,
        'available_commands_update',
      )
      const names = (update.params.update.availableCommands as { name: string }[]).map((c) => c.name)
      expect(names).toEqual(['undo', 'redo', 'fine'])
      expect(leaks(update)).toBe(false)
      input.end()
      await done
    } finally {
      await env.cleanup()
    }
  })
})
