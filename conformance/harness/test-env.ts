/**
 * Test-process set-up: every test file gets its own temporary CHIMERA_HOME (removed after the
 * file) so nothing touches the user's real home, and provider keys or server tokens from the
 * developer's environment never leak into the offline-model tests.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

const home = mkdtempSync(join(tmpdir(), 'chimera-test-home-'))
process.env.CHIMERA_HOME = home
for (const k of [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'CHIMERA_ANTHROPIC_THINKING_BUDGET',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'CHIMERA_OPENAI_BASE_URL',
  'CHIMERA_OPENAI_API_KEY',
  'CHIMERA_OPENAI_CONTEXT_WINDOW',
  'OTTER_SERVER_TOKEN',
  'FERRET_SERVER_TOKEN',
]) {
  delete process.env[k]
}
// Every value a generated validator's plain check accepts is parsed by zod too, here and in the
// processes the tests start, and a difference throws (generated/lazy-schema.gen.ts).
process.env.CHIMERA_PLAIN_CHECK_VERIFY = '1'
afterAll(() => rmSync(home, { recursive: true, force: true }))
