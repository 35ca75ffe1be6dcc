/**
 * `make serve PORT=… HOST=…` (README "Set-up"): the values given to make reach `otter serve`;
 * without them it serves 127.0.0.1:5173; a HOST or PORT in the environment (shells export HOST
 * as the machine's name) does not; `make help` says so. `make -n` prints, runs nothing.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const hasMake = spawnSync('make', ['--version']).status === 0
const dry = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync('make', ['-n', '-s', '-C', root, ...args], { encoding: 'utf8', env: { ...process.env, ...env } })
  expect(r.status).toBe(0)
  return r.stdout.split('\n').find((l) => l.includes('otter serve'))
}

describe.skipIf(!hasMake)('make serve', () => {
  it('takes PORT and HOST from make’s command line', () => {
    expect(dry(['serve', 'PORT=6001', 'HOST=127.0.0.2'])).toBe(
      'node bin/chimera.mjs otter serve --port 6001 --host 127.0.0.2',
    )
    expect(dry(['serve'])).toBe('node bin/chimera.mjs otter serve --port 5173 --host 127.0.0.1')
    expect(dry(['serve'], { HOST: 'my-laptop', PORT: '1' })).toBe(
      'node bin/chimera.mjs otter serve --port 5173 --host 127.0.0.1',
    )
    const help = spawnSync('make', ['-s', '-C', root, 'help'], { encoding: 'utf8' }).stdout
    expect(help).toMatch(/make serve .*HOST:PORT .*make serve PORT=8080 HOST=0\.0\.0\.0/)
  })
})
