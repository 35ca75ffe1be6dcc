/**
 * Custom slash commands: discovery in the project and user scopes (project wins), frontmatter,
 * rendering (`$1`, `$NAME` case-insensitive, `$ARGUMENTS`, shell-like splitting), malformed
 * files skipped and reported, names validated, the invoke route's errors, and the core running
 * `/name args` as a user turn.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ofType, testEnv, within } from '../core/fixtures/harness.ts'
import { ChimeraError } from '../errors.ts'
import { CustomCommands, MAX_FILE_BYTES, customCommands, userCommandsDir } from './custom-commands.ts'
import { loadFrontmatterParser } from './frontmatter.ts'

// Command and agent files are read synchronously once the YAML parser is loaded (the manager and the routes load it).
beforeAll(() => loadFrontmatterParser())

let base: string
let cwd: string
let userDir: string
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-cmd-')))
  cwd = join(base, 'project')
  userDir = join(base, 'user-commands')
  mkdirSync(join(cwd, '.opencode', 'command'), { recursive: true })
  mkdirSync(userDir)
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const project = (name: string, text: string) => writeFileSync(join(cwd, '.opencode', 'command', name), text)
const user = (name: string, text: string) => writeFileSync(join(userDir, name), text)
const commands = () => new CustomCommands({ cwd, userDir })

const SUMMARIZE = `---
description: Summarize $1 about $TARGET
args:
  - name: target
    description: subject of the summary
---
Please summarize $1 — focus on $TARGET.
`

describe('discovery', () => {
  it('lists project and user commands, the project winning on a name conflict', () => {
    project('summarize.md', SUMMARIZE)
    user('summarize.md', '---\ndescription: the user one\n---\nuser version\n')
    user('review.md', 'Review the staged changes.\nThen say so.\n')
    expect(commands().list()).toEqual({
      commands: [
        { name: 'review', description: 'Review the staged changes.', args: [], source: join(userDir, 'review.md') },
        {
          name: 'summarize',
          description: 'Summarize $1 about $TARGET',
          args: [{ name: 'target', description: 'subject of the summary' }],
          source: join(cwd, '.opencode', 'command', 'summarize.md'),
        },
      ],
    })
    expect(commands().render('summarize', 'x')).toBe('Please summarize x — focus on .')
  })

  it('an empty palette (no directories at all) is an empty list, not an error', () => {
    const c = new CustomCommands({ cwd: join(base, 'nowhere'), userDir: join(base, 'none') })
    expect(c.list()).toEqual({ commands: [] })
  })

  it('the user scope is ~/.opencode/command unless CHIMERA_USER_COMMANDS_DIR says otherwise', () => {
    expect(userCommandsDir({ HOME: '/home/x' })).toMatch(/\.opencode\/command$/)
    expect(userCommandsDir({ CHIMERA_USER_COMMANDS_DIR: userDir })).toBe(userDir)
    user('hello.md', 'hi $1')
    expect(new CustomCommands({ cwd, env: { CHIMERA_USER_COMMANDS_DIR: userDir } }).render('hello', 'there')).toBe(
      'hi there',
    )
  })

  it('sees a file edited or added while running', () => {
    const c = commands()
    expect(c.render('greet', '')).toBeUndefined()
    project('greet.md', 'one')
    expect(c.render('greet', '')).toBe('one')
    project('greet.md', 'two, longer')
    expect(c.render('greet', '')).toBe('two, longer')
  })
})

describe('malformed files are skipped and reported', () => {
  it('reports each problem with its file and keeps the good commands', () => {
    project('good.md', 'fine')
    project('badyaml.md', '---\ndescription: [unclosed\n---\nbody')
    project('unclosed.md', '---\ndescription: x\nbody without end')
    project('argsmap.md', '---\nargs: {target: x}\n---\nbody')
    project('desc.md', '---\ndescription: 3\n---\nbody')
    project('empty.md', '---\ndescription: nothing\n---\n\n')
    project('list.md', '---\n- a\n---\nbody')
    project('dupe.md', '---\nargs: [a, A]\n---\nbody')
    project('reservedarg.md', '---\nargs: [arguments]\n---\nbody')
    project('-dash.md', 'bad name')
    project('undo.md', 'shadowing the built-in')
    project('huge.md', 'x'.repeat(MAX_FILE_BYTES + 1))
    mkdirSync(join(cwd, '.opencode', 'command', 'dir.md'))
    const { commands: listed, problems } = commands().scan()
    expect(listed.map((c) => c.name)).toEqual(['good'])
    const why = Object.fromEntries(problems.map((p) => [p.source.split('/').at(-1), p.error]))
    expect(why).toEqual({
      '-dash.md': expect.stringMatching(/must start with a letter/),
      'argsmap.md': '`args` must be a list',
      'badyaml.md': expect.stringMatching(/^frontmatter is not valid YAML/),
      'desc.md': '`description` must be a string',
      'dupe.md': '`args`: A is declared twice',
      'empty.md': 'the template is empty',
      'huge.md': `larger than ${MAX_FILE_BYTES} bytes`,
      'list.md': 'frontmatter must be a mapping',
      'reservedarg.md': '`ARGUMENTS` is reserved for the whole argument string',
      'undo.md': '/undo is a built-in command',
      'unclosed.md': 'frontmatter is not closed (no second --- line)',
    })
    expect(commands().list().problems).toHaveLength(11)
  })

  it('a malformed project file does not hide the user command of the same name', () => {
    project('deploy.md', '---\ndescription: [oops\n---\nproject')
    user('deploy.md', 'user deploy $1')
    expect(commands().render('deploy', 'prod')).toBe('user deploy prod')
  })

  it('names with path tricks never reach the filesystem', () => {
    writeFileSync(join(base, 'secret.md'), 'SECRET')
    const c = commands()
    for (const name of ['../secret', '..', '.hidden', 'a/b', 'a\\b', 'x\0y', '']) {
      expect(c.render(name, '')).toBeUndefined()
      expect(() => c.invoke(name, { session_id: 's' })).toThrow(ChimeraError)
    }
  })
})

describe('rendering', () => {
  it("renders the document's example through invoke", () => {
    project('summarize.md', SUMMARIZE)
    expect(
      commands().invoke('summarize', {
        session_id: 'abc123',
        args: ['chapter-7'],
        kwargs: { target: 'the otter REPL' },
      }),
    ).toEqual({
      session_id: 'abc123',
      name: 'summarize',
      rendered: 'Please summarize chapter-7 — focus on the otter REPL.',
      arguments: "chapter-7 'target=the otter REPL'",
    })
  })

  it('positional, named (any case), whole-string and braced placeholders, in one pass', () => {
    project(
      't.md',
      '---\nargs: [target, Mode]\n---\n1=$1 2=$2 10=$10 t=$TARGET/$target/${Target} m=$mode all=[$ARGUMENTS] home=$HOME zero=$0 glued=${1}x',
    )
    const c = commands()
    expect(c.render('t', 'alpha "beta gamma" target=prod mode=fast')).toBe(
      '1=alpha 2=beta gamma 10= t=prod/prod/prod m=fast all=[alpha "beta gamma" target=prod mode=fast] home=$HOME zero=$0 glued=alphax',
    )
    // A value that looks like a placeholder is not substituted again; undeclared key=value stays positional.
    expect(c.render('t', "'$2' other=1 secret")).toBe(
      "1=$2 2=other=1 10= t=// m= all=['$2' other=1 secret] home=$HOME zero=$0 glued=$2x",
    )
    expect(c.render('t', '')).toBe('1= 2= 10= t=// m= all=[] home=$HOME zero=$0 glued=x')
  })

  it('an unbalanced quote is an error, not a guess', () => {
    project('q.md', 'echo $1')
    expect(() => commands().render('q', '"open')).toThrow(/quoted string/)
  })
})

describe('the invoke route', () => {
  const codeOf = (fn: () => unknown) => {
    try {
      fn()
    } catch (err) {
      const e = err as ChimeraError
      return [e.code, e.resource ?? e.detail ?? null]
    }
    return 'no error'
  }
  it("throws each failure with the document's code", () => {
    project('ok.md', 'ok $1')
    const c = commands()
    expect(codeOf(() => c.invoke('ok', {}))).toEqual(['missing_session_id', null])
    expect(codeOf(() => c.invoke('ok', null))).toEqual(['missing_session_id', null])
    expect(codeOf(() => c.invoke('ok', { session_id: 's', args: 'a' }))).toEqual(['args_must_be_list', null])
    expect(codeOf(() => c.invoke('ok', { session_id: 's', kwargs: [] }))).toEqual(['kwargs_must_be_object', null])
    expect(codeOf(() => c.invoke('nope', { session_id: 's' }))).toEqual(['command_not_found', 'nope'])
    expect(codeOf(() => c.invoke('ok', { session_id: 's', args: [{ a: 1 }] }))).toEqual([
      'command_invoke_failed',
      'arguments must be strings, numbers or booleans',
    ])
    expect(c.invoke('ok', { session_id: 's', args: [7, true] }).rendered).toBe('ok 7')
  })
})

describe('through the core', () => {
  it('/name args runs the rendered template as a user turn; unknown names go to the model unchanged', async () => {
    const env = testEnv('chimera-cmd-core-')
    try {
      mkdirSync(join(env.cwd, '.opencode', 'command'), { recursive: true })
      writeFileSync(join(env.cwd, '.opencode', 'command', 'summarize.md'), SUMMARIZE)
      writeFileSync(join(env.cwd, '.opencode', 'command', 'echo.md'), '!say echo: $ARGUMENTS')
      const s = await env.manager({ commands: customCommands({ userDir }) }).create()
      const out = await within(s.prompt('/summarize chapter-7 target="the otter REPL"').done, 10_000, 'summarize')
      expect(out.output).toBe(
        'offline model: no provider is configured. You said: Please summarize chapter-7 — focus on the otter REPL.',
      )
      expect((await within(s.prompt('/echo  a   "b  c" ').done, 10_000, 'echo')).output).toBe('echo: a   "b  c"')
      expect((await within(s.prompt('/nope x').done, 10_000, 'nope')).output).toBe(
        'offline model: no provider is configured. You said: /nope x',
      )
      const bad = await within(s.prompt('/summarize "unbalanced').done, 10_000, 'bad')
      expect(bad).toMatchObject({ success: false, output: '/summarize: Got EOF while in a quoted string' })
      const invoked = new CustomCommands({ cwd: env.cwd, userDir }).invoke('echo', {
        session_id: s.id,
        args: ['via', 'http'],
      })
      expect(
        (
          await within(
            s.promptCommand(invoked.rendered, { name: invoked.name, arguments: invoked.arguments }).done,
            10_000,
            'invoke',
          )
        ).output,
      ).toBe('echo: via http')

      const events = await s.events()
      expect(ofType(events, 'user_message').map((e) => [e.data.text, e.data.command])).toEqual([
        [
          'Please summarize chapter-7 — focus on the otter REPL.',
          { name: 'summarize', arguments: 'chapter-7 target="the otter REPL"' },
        ],
        ['!say echo: a   "b  c"', { name: 'echo', arguments: 'a   "b  c"' }],
        ['/nope x', undefined],
        ['!say echo: via http', { name: 'echo', arguments: 'via http' }],
      ])
      expect(ofType(events, 'error').map((e) => e.data)).toEqual([
        { message: '/summarize: Got EOF while in a quoted string', source: 'command' },
      ])
    } finally {
      await env.cleanup()
    }
  })
})
