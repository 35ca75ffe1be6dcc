/**
 * Applying an expected-failures list to results: a listed failure is expected, a listed pass
 * is stale, and a flaky entry excuses a failure without turning a pass stale.
 */
import { describe, expect, it } from 'vitest'
import { applyExpected, type ExpectedFailure } from './expected.ts'

const list: ExpectedFailure[] = [
  { id: 'core.tool.write*', reason: 'adds a final newline' },
  { id: 'core.tool.failure-then-success', reason: 'reports concurrent calls in varying order', flaky: true },
]
const r = (id: string, status: string) => ({ id, transport: 'acp-v1' as const, status })

describe('applyExpected', () => {
  it('a listed failure is xfail with its reason; an unlisted result is untouched', () => {
    const a = r('core.tool.write', 'fail')
    applyExpected(a, list)
    expect(a).toMatchObject({ status: 'xfail', expectedReason: 'adds a final newline' })
    const b = r('core.tool.read', 'fail')
    applyExpected(b, list)
    expect(b.status).toBe('fail')
  })

  it('a listed pass is stale, unless the entry is flaky', () => {
    const a = r('core.tool.write-unicode', 'pass')
    applyExpected(a, list)
    expect(a).toMatchObject({ status: 'stale', message: expect.stringContaining('remove it from the list') })
    const f = r('core.tool.failure-then-success', 'pass')
    applyExpected(f, list)
    expect(f.status).toBe('pass')
    const g = r('core.tool.failure-then-success', 'fail')
    applyExpected(g, list)
    expect(g).toMatchObject({ status: 'xfail', expectedReason: 'reports concurrent calls in varying order' })
  })
})
