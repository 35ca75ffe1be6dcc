/**
 * A malformed `since` query parameter (chimera.openapi.yaml SinceFilter) is a 400 `invalid_query`
 * whose message says what the parameter accepts, not the pattern it is checked with.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessTarget, type ServerTarget } from '../../conformance/harness/targets.ts'

let target: ServerTarget | undefined
afterEach(async () => {
  await target?.close()
  target = undefined
})

describe('?since=banana', () => {
  it.each(['/sessions', '/runs', '/runs/cost'])('%s answers 400 with a human message', async (path) => {
    target = inProcessTarget()
    const r = await target.fetch(new Request(`${target.baseUrl}${path}?since=banana`))
    expect(r.status).toBe(400)
    const body = (await r.json()) as { error: string; message: string; detail: { path: string; message: string }[] }
    expect(body.error).toBe('invalid_query')
    expect(body.message).toMatch(/since: expected 7d, 24h or 30m .* or an ISO-8601 date or date-time/)
    expect(body.detail).toEqual([
      expect.objectContaining({ path: 'since', message: expect.stringMatching(/^expected 7d/) }),
    ])
    expect(JSON.stringify(body)).not.toMatch(/\[0-9\]|\^\(/)
  })
})
