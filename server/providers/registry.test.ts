/**
 * The process's registry from the environment and `--model`: one real provider per process
 * beside the offline model, model ids (`provider/model`, bare known ids, any name for an
 * OpenAI-compatible server), clear errors for providers that are not configured or not this
 * process's, the default model, configuration mistakes, and the `GET /providers` and
 * `GET /info` data. Plus the CLI: `--model gpt-4o` without OPENAI_API_KEY is a usage error.
 */
import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { ProviderConfigError } from './configure.ts'
import { drain, user } from './fixtures/provider-harness.ts'
import { buildModelRegistry, infoFields, providersResponse } from './registry.ts'

const ANTHROPIC = { ANTHROPIC_API_KEY: 'sk-ant-test' }
const OPENAI = { OPENAI_API_KEY: 'sk-test' }
const COMPAT = { CHIMERA_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }

describe('which provider a process runs', () => {
  it('no provider configured: the offline model only, and it is the default', () => {
    const r = buildModelRegistry({})
    expect(r.defaultModel).toBe('offline')
    expect(r.models()).toEqual(['offline'])
    expect(providersResponse(r)).toEqual({
      active: { provider: 'offline', model: 'offline' },
      available: [
        { name: 'offline', configured: true },
        { name: 'anthropic', configured: false },
        { name: 'openai', configured: false },
        { name: 'openai-compatible', configured: false },
      ],
    })
    expect(infoFields(r)).toEqual({ model: 'offline', provider: 'offline' })
  })

  it('a configured provider becomes the default without --model', () => {
    const r = buildModelRegistry(ANTHROPIC)
    expect(r.defaultModel).toBe('anthropic/claude-sonnet-4-5')
    expect(providersResponse(r).active).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' })
    expect(infoFields(r)).toEqual({ model: 'claude-sonnet-4-5', provider: 'anthropic' })
    expect(r.models()).toContain('anthropic/claude-haiku-4-5')
    expect(buildModelRegistry(OPENAI).defaultModel).toBe('openai/gpt-4o')
  })

  it("--model picks the provider when several are configured; the others are not this process's", () => {
    const r = buildModelRegistry({ ...ANTHROPIC, ...OPENAI }, { model: 'openai/gpt-4.1' })
    expect(r.providerFor('openai/gpt-4.1')?.name).toBe('openai')
    expect(providersResponse(r)).toMatchObject({ active: { provider: 'openai', model: 'gpt-4.1' } })
    expect(
      providersResponse(r)
        .available.filter((a) => a.configured)
        .map((a) => a.name),
    ).toEqual(['offline', 'anthropic', 'openai'])
    expect(() => r.check('anthropic/claude-sonnet-4-5')).toThrow(
      expect.objectContaining({ name: 'ChimeraError', code: 'model_unavailable' }),
    )
    expect(() => r.check('claude-sonnet-4-5')).toThrow(
      /one provider per process, and this one runs openai; restart with --model anthropic\/<model>/,
    )
    expect(() => r.check('offline')).not.toThrow()
  })

  it('bare known ids (and dated aliases) belong to their provider', () => {
    const r = buildModelRegistry({ ...ANTHROPIC }, { model: 'claude-sonnet-4-5-20250929' })
    expect(r.providerFor('claude-sonnet-4-5-20250929')?.name).toBe('anthropic')
    expect(r.providerFor('claude-haiku-4-5')?.name).toBe('anthropic')
    expect(r.providerFor('anthropic/claude-anything-new')?.name).toBe('anthropic')
    expect(() => r.check('anthropic/claude-anything-new')).not.toThrow()
  })

  it("an OpenAI-compatible server serves any name, prefixed or bare, but not another provider's ids", () => {
    const r = buildModelRegistry(COMPAT, { model: 'llama3.1:8b' })
    expect(r.providerFor('llama3.1:8b')?.name).toBe('openai-compatible')
    expect(r.providerFor('openai-compatible/meta-llama/Llama-3.1-8B-Instruct')?.name).toBe('openai-compatible')
    expect(() => r.check('gpt-4o')).toThrow(/needs the openai provider, which is not configured: set OPENAI_API_KEY/)
    expect(providersResponse(r).active).toEqual({ provider: 'openai-compatible', model: 'llama3.1:8b' })
  })

  it('an OpenAI-compatible server without --model: sessions stay on the offline model unless they name one', () => {
    const r = buildModelRegistry(COMPAT)
    expect(r.defaultModel).toBe('offline')
    expect(r.providerFor('openai-compatible/qwen2.5')?.name).toBe('openai-compatible')
  })
})

describe('clear errors', () => {
  it('a provider that is not configured: check names the variable to set', () => {
    const r = buildModelRegistry({}, { model: 'gpt-4o' })
    expect(() => r.check('gpt-4o')).toThrow(
      expect.objectContaining({
        code: 'model_unavailable',
        message: 'model "gpt-4o" needs the openai provider, which is not configured: set OPENAI_API_KEY',
      }),
    )
    expect(() => r.check('anthropic/claude-x')).toThrow(/set ANTHROPIC_API_KEY/)
    expect(() => r.check('openai-compatible/llama3')).toThrow(/set CHIMERA_OPENAI_BASE_URL/)
  })

  it('an unknown model is the unknown-model error listing what is available', () => {
    expect(() => buildModelRegistry(ANTHROPIC).check('nonsense-model')).toThrow(
      expect.objectContaining({ name: 'ChimeraError', code: 'unknown_model' }),
    )
    expect(() => buildModelRegistry(ANTHROPIC).check('nonsense-model')).toThrow(
      /available: offline, anthropic\/claude-opus-4-5/,
    )
  })

  it('a session that reaches an unavailable provider (reloaded in another process) gets a provider error, not a crash', async () => {
    const r = buildModelRegistry({})
    const res = await drain(r.providerFor('anthropic/claude-sonnet-4-5')!, 'anthropic/claude-sonnet-4-5', [user('hi')])
    expect(res.error?.name).toBe('ProviderError')
    expect(res.error?.message).toBe(
      'model "anthropic/claude-sonnet-4-5" needs the anthropic provider, which is not configured: set ANTHROPIC_API_KEY',
    )
  })

  it('blank variables count as unset', () => {
    expect(
      providersResponse(buildModelRegistry({ ANTHROPIC_API_KEY: '  ', OPENAI_API_KEY: '' })).available.filter(
        (a) => a.configured,
      ),
    ).toEqual([{ name: 'offline', configured: true }])
  })

  it('configuration mistakes are refused at start, without echoing credentials', () => {
    expect(() => buildModelRegistry({ CHIMERA_OPENAI_BASE_URL: 'not a url' })).toThrow(
      new ProviderConfigError('CHIMERA_OPENAI_BASE_URL is not a URL'),
    )
    expect(() => buildModelRegistry({ CHIMERA_OPENAI_BASE_URL: 'ftp://host/v1' })).toThrow(
      /must be an http:\/\/ or https:\/\/ URL/,
    )
    let message = ''
    try {
      buildModelRegistry({ CHIMERA_OPENAI_BASE_URL: 'http://user:hunter2secret@host/v1' })
    } catch (e) {
      message = (e as Error).message
    }
    expect(message).toBe(
      'CHIMERA_OPENAI_BASE_URL must not carry credentials (http://host/v1); put the key in its API key variable',
    )
    expect(() => buildModelRegistry({ ...COMPAT, CHIMERA_OPENAI_CONTEXT_WINDOW: 'lots' })).toThrow(
      /CHIMERA_OPENAI_CONTEXT_WINDOW must be an integer/,
    )
    expect(() => buildModelRegistry({ ...ANTHROPIC, CHIMERA_ANTHROPIC_THINKING_BUDGET: '10' })).toThrow(/at least 1024/)
  })
})

describe('context windows', () => {
  it('per model from the catalog; a conservative default per provider for unknown models; the variable for a local server', () => {
    const a = buildModelRegistry(ANTHROPIC)
    expect(a.providerFor('anthropic/claude-sonnet-4-5')!.contextWindow('anthropic/claude-sonnet-4-5')).toBe(200_000)
    const o = buildModelRegistry(OPENAI, { model: 'openai/gpt-4.1' })
    expect(o.providerFor('openai/gpt-4.1')!.contextWindow('openai/gpt-4.1')).toBe(1_047_576)
    expect(o.providerFor('openai/gpt-4o')!.contextWindow('gpt-4o-2024-08-06')).toBe(128_000)
    expect(o.providerFor('openai/gpt-new')!.contextWindow('openai/gpt-new')).toBe(128_000)
    const c = buildModelRegistry(COMPAT, { model: 'openai-compatible/llama3' })
    expect(c.providerFor('openai-compatible/llama3')!.contextWindow('openai-compatible/llama3')).toBe(8_192)
    const c2 = buildModelRegistry(
      { ...COMPAT, CHIMERA_OPENAI_CONTEXT_WINDOW: '32768' },
      { model: 'openai-compatible/llama3' },
    )
    expect(c2.providerFor('openai-compatible/llama3')!.contextWindow('openai-compatible/llama3')).toBe(32_768)
  })
})

describe('the CLI', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI_BUNDLE, ...args], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      input: '',
      timeout: 20_000,
    })

  it('--model gpt-4o without OPENAI_API_KEY is a usage error (exit 2) naming the variable, nothing on stdout', () => {
    const r = run(['code', '--mode', 'rpc', '--model', 'gpt-4o'], ANTHROPIC)
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('model "gpt-4o" needs the openai provider, which is not configured: set OPENAI_API_KEY')
  })

  it('--model openai-compatible/<name> with a base URL is accepted (the input ends, the process exits 0)', () => {
    const r = run(['code', '--mode', 'rpc', '--model', 'openai-compatible/llama3'], COMPAT)
    expect(r.stderr).not.toContain('error:')
    expect(r.status).toBe(0)
  })
})
