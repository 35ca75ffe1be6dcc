/**
 * Agent definitions: the project and user scopes (project wins), frontmatter (`description`,
 * `tools` matched case-insensitively, `model`), an unknown tool or malformed file as a clear
 * error naming it, and `--agent` through the session flags: the agent's tools become the
 * session's allowed tools (cut to `--allowed-tools`), so tools outside them — the LSP tools
 * included — are not offered to the model.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { UsageError } from '../cli/args.ts'
import { agentFlag, sessionFlags } from '../cli/session-flags.ts'
import { MAX_FILE_BYTES } from '../commands/custom-commands.ts'
import type { LspFactory } from '../lsp/provider.ts'
import {
  AgentDefinitionError,
  agentAllowedTools,
  loadAgentDefinition,
  parseAgentFile,
  registryToolName,
  userAgentsDir,
} from './agent-definitions.ts'
import { offlineModels } from '../providers/registry.ts'
import { loadFrontmatterParser } from '../commands/frontmatter.ts'

// Command and agent files are read synchronously once the YAML parser is loaded (the manager and the routes load it).
beforeAll(() => loadFrontmatterParser())

let env: TestEnv
let cwd: string
let userDir: string
beforeEach(() => {
  env = testEnv('chimera-agents-')
  cwd = realpathSync(env.cwd)
  userDir = join(env.base, 'user-agents')
  mkdirSync(join(cwd, '.opencode', 'agent'), { recursive: true })
  mkdirSync(userDir)
})
afterEach(async () => {
  await env.cleanup()
})

const projectFile = (name: string) => join(cwd, '.opencode', 'agent', `${name}.md`)
const project = (name: string, text: string) => writeFileSync(projectFile(name), text)
const user = (name: string, text: string) => writeFileSync(join(userDir, `${name}.md`), text)
const load = (name: string) => loadAgentDefinition(name, { cwd, userDir })

const NO_LSP = `---
description: Edits without language servers
tools: [bash, read, edit, grep]   # no LSP tools
---
You are careful.
`

describe('agent files', () => {
  it('parses description, tools (registry spelling) and the body as prompt', () => {
    project('careful', NO_LSP)
    expect(load('careful')).toEqual({
      name: 'careful',
      source: projectFile('careful'),
      description: 'Edits without language servers',
      tools: ['Bash', 'Read', 'Edit', 'Grep'],
      prompt: 'You are careful.',
    })
  })

  it('matches tool names case-insensitively and keeps LSP names as the registry spells them', () => {
    project('lsp', '---\ntools: [BASH, Read, eDiT, LSP_Diagnostics, lsp_definition, bash]\nmodel: offline\n---\n')
    const a = load('lsp')
    expect(a.tools).toEqual(['Bash', 'Read', 'Edit', 'lsp_diagnostics', 'lsp_definition'])
    expect(a.model).toBe('offline')
    expect(a.prompt).toBe('')
    expect(registryToolName('list_FILES')).toBe('list_files')
    expect(registryToolName('constructor')).toBeUndefined()
  })

  it('without `tools` the agent does not narrow the tools; a block list works like a flow list', () => {
    project('plain', 'Just a prompt.\n')
    expect(load('plain').tools).toBeUndefined()
    project('block', '---\ntools:\n  - read\n  - lsp_references\n---\nbody\n')
    expect(load('block').tools).toEqual(['Read', 'lsp_references'])
    project('none', '---\ntools: []\n---\n')
    expect(load('none').tools).toEqual([])
  })

  it('the project scope wins over the user scope; the user scope alone is found', () => {
    project('both', '---\ntools: [read]\n---\nproject\n')
    user('both', '---\ntools: [bash]\n---\nuser\n')
    user('mine', '---\ndescription: user only\ntools: [glob]\n---\n')
    expect(load('both')).toMatchObject({ tools: ['Read'], prompt: 'project', source: projectFile('both') })
    expect(load('mine')).toMatchObject({ description: 'user only', tools: ['Glob'], source: join(userDir, 'mine.md') })
  })

  it('the user scope is ~/.opencode/agent unless CHIMERA_USER_AGENTS_DIR says otherwise', () => {
    expect(userAgentsDir({})).toMatch(/\.opencode\/agent$/)
    expect(userAgentsDir({ CHIMERA_USER_AGENTS_DIR: userDir })).toBe(userDir)
    user('via-env', '---\ntools: [read]\n---\n')
    expect(loadAgentDefinition('via-env', { cwd, env: { CHIMERA_USER_AGENTS_DIR: userDir } }).tools).toEqual(['Read'])
  })

  it('an unknown tool is an error naming it and the file', () => {
    project('typo', '---\ntools: [bash, lsp_hover]\n---\n')
    expect(() => load('typo')).toThrow(AgentDefinitionError)
    expect(() => load('typo')).toThrow(
      `${projectFile('typo')}: unknown tool "lsp_hover" in \`tools\`; tools: Read, Write`,
    )
  })

  it('a missing agent names both places it looked', () => {
    expect(() => load('ghost')).toThrow(
      `no agent named "ghost" (looked for ghost.md in ${join(cwd, '.opencode', 'agent')} and ${userDir})`,
    )
  })

  const malformed: [string, string, string][] = [
    ['unclosed frontmatter', '---\ntools: [read]\nbody\n', 'frontmatter is not closed'],
    ['invalid YAML', '---\ntools: [read\n---\n', 'frontmatter is not valid YAML'],
    ['frontmatter that is not a mapping', '---\n- read\n---\n', 'frontmatter must be a mapping'],
    ['tools that are not a list', '---\ntools: bash, read\n---\n', '`tools` must be a list'],
    [
      'a tool entry that is not a name',
      '---\ntools: [read, {bash: true}]\n---\n',
      '`tools` entries must be tool names',
    ],
    ['a description that is not a string', '---\ndescription: [a]\n---\n', '`description` must be a string'],
    ['a model that is not a string', '---\nmodel: 3\n---\n', '`model` must be a model id'],
  ]
  for (const [what, text, message] of malformed) {
    it(`${what} is an error naming the file`, () => {
      project('bad', text)
      expect(() => load('bad')).toThrow(`${projectFile('bad')}: ${message}`)
    })
  }

  it('a malformed project file is an error, not a fall-back to the user one', () => {
    project('shadow', '---\ntools: [nope]\n---\n')
    user('shadow', '---\ntools: [read]\n---\n')
    expect(() => load('shadow')).toThrow(/unknown tool "nope"/)
  })

  it('a file over the size bound, and a bad agent name, are errors', () => {
    project('huge', `---\ntools: [read]\n---\n${'x'.repeat(MAX_FILE_BYTES)}`)
    expect(() => load('huge')).toThrow(`larger than ${MAX_FILE_BYTES} bytes`)
    expect(() => load('../etc/passwd')).toThrow('"../etc/passwd" is not an agent name')
  })

  it('parseAgentFile reports problems as strings (the loader adds the path)', () => {
    expect(parseAgentFile('x', 'x.md', '---\ntools: [Foo]\n---\n')).toMatch(/^unknown tool "Foo"/)
  })
})

describe('--agent and the allowed tools', () => {
  it('the agent list alone, --allowed-tools alone, and both (intersected, in the agent order)', () => {
    expect(agentAllowedTools(['Bash', 'Read', 'lsp_definition'], undefined)).toEqual(['Bash', 'Read', 'lsp_definition'])
    expect(agentAllowedTools(undefined, ['Read'])).toEqual(['Read'])
    expect(agentAllowedTools(undefined, undefined)).toBeUndefined()
    expect(agentAllowedTools(['Bash', 'Read', 'lsp_definition'], ['lsp_definition', 'Read', 'Write'])).toEqual([
      'Read',
      'lsp_definition',
    ])
  })

  it('session flags: the agent sets the allowed tools and the model; --allowed-tools cuts them; --model wins', () => {
    project('lsp', '---\ntools: [bash, read, edit, lsp_diagnostics, lsp_definition]\nmodel: offline\n---\n')
    const models = offlineModels()
    const agent = agentFlag({ cwd, agent: 'lsp' }, { userDir })
    expect(sessionFlags({ cwd, agent: 'lsp' }, [], models, agent)).toMatchObject({
      allowedTools: ['Bash', 'Read', 'Edit', 'lsp_diagnostics', 'lsp_definition'],
      model: 'offline',
    })
    expect(
      sessionFlags({ cwd, agent: 'lsp', 'allowed-tools': 'Read,lsp_definition,Grep' }, [], models, agent).allowedTools,
    ).toEqual(['Read', 'lsp_definition'])
    expect(sessionFlags({ cwd }, [], models, undefined)).not.toHaveProperty('allowedTools')
  })

  it('session flags: a missing agent, a malformed one, and a model no provider serves are usage errors', () => {
    expect(() => agentFlag({ cwd, agent: 'ghost' }, { userDir })).toThrow(UsageError)
    expect(() => agentFlag({ cwd, agent: 'ghost' }, { userDir })).toThrow(/^--agent: no agent named "ghost"/)
    project('typo', '---\ntools: [bsh]\n---\n')
    expect(() => agentFlag({ cwd, agent: 'typo' }, { userDir })).toThrow(/^--agent: .*typo\.md: unknown tool "bsh"/)
    project('far', '---\nmodel: nope-model\n---\n')
    const far = agentFlag({ cwd, agent: 'far' }, { userDir })
    expect(() => sessionFlags({ cwd, agent: 'far' }, [], offlineModels(), far)).toThrow(
      /^--agent: .*far\.md: `model`: unknown model "nope-model"/,
    )
    expect(agentFlag({ cwd }, { userDir })).toBeUndefined()
  })

  it('a session of an agent without LSP tools is not offered them; one that opts in gets only its subset', async () => {
    const lsp: LspFactory = () => undefined
    project('careful', NO_LSP)
    project('lsp', '---\ntools: [bash, read, edit, lsp_diagnostics, lsp_definition]\n---\n')
    const models = offlineModels()
    const offered = async (name: string): Promise<string[]> => {
      const defaults = sessionFlags({ cwd, agent: name }, [], models, agentFlag({ cwd, agent: name }, { userDir }))
      const s = await env.manager({ ...defaults, lsp }).create()
      return s.availableTools().map((t) => t.name)
    }
    expect(await offered('careful')).toEqual(['Read', 'Edit', 'Bash', 'Grep'])
    expect(await offered('lsp')).toEqual(['Read', 'Edit', 'Bash', 'lsp_diagnostics', 'lsp_definition'])
  })
})
