/**
 * Expected failures are exact: a listed failure is expected only when it fails the way the entry
 * says; a listed pass is stale (unless flaky); a different failure stays a failure; an entry that
 * names nothing, or was only skipped, is a problem of the list.
 */
import { describe, expect, it } from 'vitest'
import { applyExpected, listProblems, type ExpectedFailure, type Judged } from './expected.ts'

const list: ExpectedFailure[] = [
  { id: 'core.tool.write', failure: 'holds "a\\\\n", expected "a"', reason: 'adds a final newline' },
  {
    id: 'core.tool.failure-then-success',
    failure: 'expected the tool to fail',
    reason: 'reports concurrent calls in varying order',
    flaky: true,
  },
  { id: 'acp.v1.wire.schema', transport: 'acp-v1', failure: 'params of session/update', reason: 'sends a seed update' },
]
const r = (id: string, status: string, message?: string, violations: Judged['violations'] = []): Judged => ({
  id,
  transport: 'acp-v1',
  status,
  message,
  violations,
})

describe('applyExpected', () => {
  it('a listed failure matching the pattern is xfail with its reason; an unlisted result is untouched', () => {
    const a = r('core.tool.write', 'fail', 'a.txt holds "a\\n", expected "a"')
    applyExpected(a, list)
    expect(a).toMatchObject({ status: 'xfail', expectedReason: 'adds a final newline' })
    const b = r('core.tool.read', 'fail', 'x')
    applyExpected(b, list)
    expect(b.status).toBe('fail')
  })

  it('a listed requirement failing differently stays a failure and says what the list expected', () => {
    const a = r('core.tool.write', 'fail', 'no response to initialize within 10000 ms')
    applyExpected(a, list)
    expect(a.status).toBe('fail')
    expect(a.message).toMatch(
      /^fails differently than listed \(the list expects \/holds .*\/: adds a final newline\): no response to initialize/,
    )
  })

  it('a listed pass is stale, unless the entry is flaky; a flaky entry still excuses its failure', () => {
    const a = r('core.tool.write', 'pass')
    applyExpected(a, list)
    expect(a).toMatchObject({ status: 'stale', message: expect.stringContaining('remove it from the list') })
    const f = r('core.tool.failure-then-success', 'pass')
    applyExpected(f, list)
    expect(f.status).toBe('pass')
    const g = r('core.tool.failure-then-success', 'fail', 'expected the tool to fail, it succeeded')
    applyExpected(g, list)
    expect(g).toMatchObject({ status: 'xfail', expectedReason: 'reports concurrent calls in varying order' })
  })

  it('an entry naming a violation rule excuses a result failed only by violations of that rule', () => {
    const v = { rule: 'acp.v1.wire.schema', problem: 'params of session/update: update: invalid' }
    const a = r('acp.v1.prompt.updates-before-response', 'fail', 'contract violation', [v])
    applyExpected(a, list)
    expect(a.status).toBe('xfail')
    const b = r('acp.v1.prompt.updates-before-response', 'fail', 'contract violation', [
      v,
      { rule: 'acp.stdio.stdout-protocol-only', problem: 'x' },
    ])
    applyExpected(b, list)
    expect(b.status).toBe('fail')
  })
})

describe('listProblems', () => {
  const known = new Map<string, readonly ('acp-v1' | 'rpc')[]>([
    ['core.tool.write', ['acp-v1', 'rpc']],
    ['core.tool.failure-then-success', ['acp-v1']],
  ])
  const rules = new Set(['acp.v1.wire.schema'])
  it('an entry naming no requirement, or one on a transport it does not bind to, is a problem', () => {
    const bad: ExpectedFailure[] = [
      { id: 'core.tool.wrtie', failure: 'x', reason: 'typo' },
      { id: 'core.tool.failure-then-success', transport: 'http', failure: 'x', reason: 'wrong transport' },
    ]
    expect(listProblems(bad, known, rules, []).map((p) => p.problem)).toEqual([
      'no requirement or rule core.tool.wrtie in the corpus',
      'core.tool.failure-then-success does not bind to http',
    ])
  })
  it('an entry whose results were all skips is a problem; one with a failure, or not run at all, is not', () => {
    expect(
      listProblems(list, known, rules, [r('core.tool.write', 'skip', 'needs approval=ask')]).map((p) => p.entry.id),
    ).toEqual(['core.tool.write'])
    expect(
      listProblems(list, known, rules, [
        r('core.tool.write', 'skip'),
        { ...r('core.tool.write', 'xfail'), transport: 'rpc' },
      ]),
    ).toEqual([])
    expect(listProblems(list, known, rules, [])).toEqual([])
  })
})
