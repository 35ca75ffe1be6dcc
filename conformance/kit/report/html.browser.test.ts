/**
 * The HTML report in a real browser (Debian chromium through playwright-core), as a person opens
 * it from disk: the page loads with no script and no request, shows the counts and a verdict per
 * requirement and transport, a failure's step and frames open under its requirement, and markup
 * from the run (a hostile title, frames) is shown as text.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'
import { afterAll, expect, it } from 'vitest'
import type { Result } from '../run/runner.ts'
import { htmlReport } from './html.ts'
import { jsonReport } from './json.ts'

const CHROMIUM = process.env.CHIMERA_CHROMIUM ?? '/usr/bin/chromium'
const dir = mkdtempSync(join(tmpdir(), 'kit-html-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"> & <b>bold</b>'
const r = (over: Partial<Result>): Result => ({
  id: 'core.prompt.text',
  title: 'A prompt streams text',
  section: 'docs/zed.md',
  level: 'MUST',
  surface: 'core',
  transport: 'rpc',
  file: 'conformance/scenarios/core/prompt-text.jsonl',
  status: 'pass',
  durationMs: 5,
  violations: [],
  ...over,
})

it('opens in chromium: counts, a verdict per transport, a failure with its frames, markup as text', async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no chromium at ${CHROMIUM} (make system-deps installs Debian's chromium; CHIMERA_CHROMIUM names another)`,
    )
  const results = [
    r({}),
    r({ transport: 'acp-v1' }),
    r({
      id: 'core.tool.read',
      title: HOSTILE,
      status: 'fail',
      line: 4,
      message: `expected text ${HOSTILE}`,
      transcript: ['>> {"type":"prompt"}', `<< ${HOSTILE}`],
    }),
    r({
      id: 'core.tool.read',
      transport: 'acp-v1',
      status: 'xfail',
      expectedReason: 'adds a newline',
      message: 'holds "a\\n"',
    }),
    r({ id: 'rpc.x.y', surface: 'rpc', status: 'skip', message: 'needs offline-model' }),
  ]
  const json = jsonReport(results, {
    profile: 'chimera',
    transports: ['acp-v1', 'rpc'],
    corpus: { hash: '0123456789abcdef', requirements: 3, bindings: 5 },
    startedAt: new Date(0),
    failOn: 'MUST',
    listProblems: [],
  })
  const file = join(dir, 'report.html')
  writeFileSync(file, htmlReport(JSON.parse(json)))
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } })
    const requests: string[] = []
    const problems: string[] = []
    page.on('request', (q) => q.url().startsWith('file:') || requests.push(q.url()))
    page.on('pageerror', (e) => problems.push(e.message))
    await page.goto(pathToFileURL(file).href)
    expect(await page.title()).toBe('Conformance: chimera')
    await expect
      .poll(() => page.locator('.counts').innerText())
      .toMatch(/2 passed\s*1 failed\s*1 expected failures\s*1 skipped/)
    const row = page.locator('tr', { has: page.locator('.id', { hasText: 'core.tool.read' }) })
    expect(await row.locator('td.v').allInnerTexts()).toEqual(['expected failure', 'FAIL'])
    expect(await row.locator('.title').first().innerText()).toBe(HOSTILE)
    // The failure's details are the row under it, across the whole table.
    const more = row.locator('xpath=following-sibling::tr[1]')
    expect(await more.getAttribute('class')).toBe('more')
    expect(await more.locator('summary').first().innerText()).toBe('rpc: FAIL')
    await more.locator('summary', { hasText: 'last frames' }).click()
    expect(await more.locator('pre').nth(1).innerText()).toContain(`<< ${HOSTILE}`)
    expect(await page.locator('img, b, script').count()).toBe(0)
    expect(await page.evaluate(() => document.title)).not.toBe('pwned')
    await page.screenshot({ path: join(dir, 'report.png'), fullPage: true })
    expect(requests).toEqual([])
    expect(problems).toEqual([])
  } finally {
    await browser.close()
  }
}, 60_000)
