/**
 * Test-process set-up: every test run gets its own temporary CHIMERA_HOME so nothing touches
 * the user's real home, and provider keys from the developer's environment never leak into
 * the offline-model tests.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

process.env.CHIMERA_HOME = mkdtempSync(join(tmpdir(), 'chimera-test-home-'))
for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CHIMERA_OPENAI_BASE_URL', 'OTTER_SERVER_TOKEN', 'FERRET_SERVER_TOKEN']) {
  delete process.env[k]
}
