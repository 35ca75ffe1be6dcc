/**
 * `chimera model-double` off loopback: refused without a key (it has no other authentication),
 * served with one, and then every request needs it. `--help` says so.
 */
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../harness/targets.ts'

const env = { ...process.env, CHIMERA_MODEL_DOUBLE_API_KEY: '' }

describe('model-double --host', () => {
  it('refuses a non-loopback host without --api-key (exit 2, a clear reason); --help names the rule', () => {
    const r = spawnSync(process.execPath, [CLI_BUNDLE, 'model-double', '--host', '0.0.0.0', '--port', '0'], {
      encoding: 'utf8',
      env,
      timeout: 20_000,
    })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/reachable from other machines.*--api-key/)
    const help = spawnSync(process.execPath, [CLI_BUNDLE, 'model-double', '--help'], {
      encoding: 'utf8',
      env,
      timeout: 20_000,
    })
    expect(help.stdout).toMatch(/--api-key/)
    expect(help.stdout).toMatch(/anything but loopback requires --api-key/)
  })

  it('serves 0.0.0.0 with a key, and a request without it is 401', async () => {
    const child = spawn(
      process.execPath,
      [CLI_BUNDLE, 'model-double', '--host', '0.0.0.0', '--port', '0', '--api-key', 'k-123'],
      { env, stdio: ['ignore', 'ignore', 'pipe'] },
    )
    try {
      let err = ''
      child.stderr.setEncoding('utf8')
      const url = await new Promise<string>((resolve, reject) => {
        child.stderr.on('data', (d: string) => {
          err += d
          const m = /at (http:\/\/[^\s]+)/.exec(err)
          if (m) resolve(m[1]!)
        })
        child.once('exit', () => reject(new Error(`exited: ${err}`)))
      })
      const port = new URL(url).port
      const models = `http://127.0.0.1:${port}/v1/models`
      expect((await fetch(models)).status).toBe(401)
      expect((await fetch(models, { headers: { authorization: 'Bearer k-123' } })).status).toBe(200)
    } finally {
      child.kill('SIGTERM')
      if (child.exitCode === null) await once(child, 'exit')
    }
  })
})
