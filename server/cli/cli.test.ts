/**
 * The bundled CLI as users run it: help and version on stdout, usage errors on stderr with exit
 * code 2 and nothing on stdout (stdout is the wire on the stdio transports).
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'

function run(args: string[], env: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'cli-home-'))
  try {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, ...args], {
      input: '',
      encoding: 'utf8',
      env: { ...process.env, CHIMERA_HOME: home, ...env },
      timeout: 20_000,
    })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

describe('chimera CLI', () => {
  it('--help lists the commands on stdout and exits 0', () => {
    const r = run(['--help'])
    expect(r.code).toBe(0)
    for (const c of ['otter', 'ferret', 'code']) expect(r.stdout).toContain(c)
  })

  it('--version prints the package version', () => {
    const r = run(['--version'])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
  })

  it('--help has no colour codes when stdout is not a terminal', () => {
    for (const args of [['--help'], ['otter', 'serve', '--help'], ['code', '--help'], ['ferret', 'serve', '--help']]) {
      const r = run(args)
      expect(r.code).toBe(0)
      expect(r.stdout).not.toMatch(/\u001b\[/)
      expect(r.stdout).toMatch(/USAGE/)
    }
  })

  it('every usage line starts with the whole command, chimera included', () => {
    for (const path of [
      [],
      ['otter'],
      ['otter', 'serve'],
      ['otter', 'serve', 'stop'],
      ['otter', 'sessions', 'list'],
      ['ferret', 'serve'],
      ['code'],
      ['mink'],
    ]) {
      const r = run([...path, '--help'])
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(new RegExp(`^USAGE ${['chimera', ...path].join(' ')}( |$)`, 'm'))
    }
  })

  const usage: [string, string[], RegExp][] = [
    ['an unknown command', ['foo'], /^error: unknown command "foo"/],
    ['an unknown subcommand', ['otter', 'bogus'], /^error: unknown command "otter bogus"/],
    ['a missing subcommand', ['ferret'], /missing subcommand/],
    ['an unknown option', ['code', '--mode', 'rpc', '--nope'], /unknown option --nope/],
    ['an unknown option on serve', ['otter', 'serve', '--verbose'], /unknown option --verbose/],
    ['an option without its value', ['otter', 'serve', '--port'], /--port needs a value/],
    ['an unexpected positional argument', ['code', '--mode', 'rpc', 'extra'], /unexpected argument "extra"/],
    [
      'a model no configured provider serves (otter serve)',
      ['otter', 'serve', '--model', 'gpt-4o'],
      /model "gpt-4o" needs the openai provider, which is not configured: set OPENAI_API_KEY/,
    ],
    [
      'a model no configured provider serves (ferret serve)',
      ['ferret', 'serve', '--model', 'gpt-4o'],
      /model "gpt-4o" needs the openai provider/,
    ],
    [
      'a --cwd that does not exist (otter serve --acp)',
      ['otter', 'serve', '--acp', '--cwd', '/nonexistent'],
      /--cwd: \/nonexistent is not a directory/,
    ],
    ['an unknown tool (ferret serve)', ['ferret', 'serve', '--allowed-tools', 'Foo'], /unknown tool\(s\) Foo/],
    [
      'an inherited property name as a tool',
      ['code', '--mode', 'rpc', '--allowed-tools', 'constructor,toString'],
      /unknown tool\(s\) constructor, toString/,
    ],
    [
      'an inherited property name in --permission',
      ['code', '--mode', 'rpc', '--permission', 'toString=allow'],
      /unknown tool "toString"/,
    ],
    [
      'a bad approval preset',
      ['ferret', 'serve', '--approval', 'maybe'],
      /--approval must be one of allow, deny, ask, auto, read-only/,
    ],
    ['a bad sandbox mode', ['ferret', 'serve', '--sandbox', 'open'], /--sandbox must be one of/],
    ['a bad port', ['otter', 'serve', '--port', '70000'], /--port must be an integer 0-65535/],
    [
      'a TLS certificate that cannot be read',
      ['otter', 'serve', '--tls-cert', '/nonexistent.pem', '--tls-key', '/nonexistent.key'],
      /--tls-cert: cannot read \/nonexistent\.pem/,
    ],
    [
      'a --session that is not a session id',
      ['code', '--mode', 'rpc', '--session', '../x'],
      /--session: "\.\.\/x" is not a session id/,
    ],
    [
      'a --session that does not exist',
      ['code', '--mode', 'rpc', '--session', 'otter-20260101T000000Z-00000000-0000-4000-8000-000000000000'],
      /--session: session not found/,
    ],
    ['an unknown model', ['code', '--mode', 'rpc', '--model', 'nope'], /unknown model "nope"; available: offline/],
    [
      'an unknown tool in --allowed-tools',
      ['code', '--mode', 'rpc', '--allowed-tools', 'Read,Nope'],
      /unknown tool\(s\) Nope/,
    ],
    ['a --cwd that is not a directory', ['code', '--mode', 'rpc', '--cwd', '/nonexistent/dir'], /is not a directory/],
    ['a bad --permission rule', ['code', '--mode', 'rpc', '--permission', 'Bash=maybe'], /Tool=allow\|ask\|deny/],
    ['a bad --approval', ['code', '--mode', 'rpc', '--approval', 'maybe'], /approval/],
    ['--mode other than rpc', ['code', '--mode', 'tui'], /mode/],
    [
      '--tls-cert without --tls-key',
      ['otter', 'serve', '--tls-cert', 'x.pem'],
      /--tls-cert and --tls-key must be given together/,
    ],
    [
      'a non-loopback bind without a token',
      ['otter', 'serve', '--host', '0.0.0.0'],
      /refusing to bind 0\.0\.0\.0 without a bearer token/,
    ],
    [
      'HTTP flags on otter serve --acp (no HTTP to apply them to)',
      ['otter', 'serve', '--acp', '--port', '1', '--host', '0.0.0.0'],
      /^error: --port, --host only apply to HTTP, and this command serves ACP on stdio only: drop --acp/m,
    ],
    [
      'an HTTP flag on ferret serve without --http',
      ['ferret', 'serve', '--session-ttl=5'],
      /^error: --session-ttl only applies to HTTP.*: add --http to serve HTTP beside ACP/m,
    ],
    [
      'an agent that does not exist (code)',
      ['code', '--mode', 'rpc', '--agent', 'no-such-agent'],
      /^error: --agent: no agent named "no-such-agent" \(looked for no-such-agent\.md in .*\.opencode\/agent and \/nonexistent\/user-agents\)/,
    ],
    [
      'an agent that does not exist (otter serve)',
      ['otter', 'serve', '--agent', 'no-such-agent'],
      /--agent: no agent named "no-such-agent"/,
    ],
    [
      'an agent that does not exist (ferret serve)',
      ['ferret', 'serve', '--agent', 'no-such-agent'],
      /--agent: no agent named "no-such-agent"/,
    ],
    [
      'an agent name that is a path',
      ['code', '--mode', 'rpc', '--agent', '../x'],
      /--agent: "\.\.\/x" is not an agent name/,
    ],
  ]
  for (const [what, args, message] of usage) {
    it(`${what} is a usage error: exit 2, one line on stderr, nothing on stdout`, () => {
      const r = run(args, { CHIMERA_USER_AGENTS_DIR: '/nonexistent/user-agents' })
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
    })
  }

  // Malformed agent files (server/agents/agent-definitions.test.ts has every kind): the flag names the file and what is wrong.
  const agentFiles: [string, string, RegExp][] = [
    ['an unknown tool', '---\ntools: [bash, lsp_hover]\n---\n', /unknown tool "lsp_hover" in `tools`; tools: Read, /],
    ['YAML that does not parse', '---\ntools: [read\n---\n', /frontmatter is not valid YAML/],
    [
      'a model no provider serves',
      '---\nmodel: nope-model\n---\n',
      /^error: --agent: .*broken\.md: `model`: unknown model "nope-model"/,
    ],
  ]
  for (const [what, text, message] of agentFiles) {
    it(`an agent file with ${what} is a usage error naming it: exit 2, one line on stderr, nothing on stdout`, () => {
      const cwd = mkdtempSync(join(tmpdir(), 'cli-agent-'))
      try {
        mkdirSync(join(cwd, '.opencode', 'agent'), { recursive: true })
        writeFileSync(join(cwd, '.opencode', 'agent', 'broken.md'), text)
        const r = run(['code', '--mode', 'rpc', '--cwd', cwd, '--agent', 'broken'], {
          CHIMERA_USER_AGENTS_DIR: '/nonexistent/user-agents',
        })
        expect(r.code).toBe(2)
        expect(r.stderr).toMatch(message)
        expect(r.stderr).toContain(join(cwd, '.opencode', 'agent', 'broken.md'))
        expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
        expect(r.stdout).toBe('')
      } finally {
        rmSync(cwd, { recursive: true, force: true })
      }
    })
  }

  for (const [agent, variable] of [
    ['otter', 'OTTER_SERVER_TOKEN'],
    ['ferret', 'FERRET_SERVER_TOKEN'],
  ] as const) {
    it(`an empty ${variable} is a usage error, not a server that refuses everyone`, () => {
      const r = run([agent, 'serve', ...(agent === 'ferret' ? ['--http'] : [])], { [variable]: '' })
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`${variable} is set but empty`))
      expect(r.stdout).toBe('')
    })
  }
})
