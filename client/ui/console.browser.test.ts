/**
 * The web console in a real browser: `chimera otter serve` (the bundled CLI, offline model,
 * `--approval ask`) serves /ui; playwright-core drives Debian's chromium through one session —
 * a `!call Write` that asks for permission, approved in the page, the file written and its diff
 * shown, markup in the session rendered as text, then undone from the page. A screenshot is kept
 * at .tmp/artifacts/ui-console.png. The static route is checked on its own (CSP, fixed files).
 *
 * The end-to-end test needs the session routes of the HTTP server (issue 8): it probes
 * `GET /sessions` and skips, saying why, when the server does not answer it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { UI_CSP } from '../../server/http/ui.ts'

const CHROMIUM = process.env.CHIMERA_CHROMIUM ?? '/usr/bin/chromium'
const TOKEN = 'ui-test-master-token'
const ARTIFACTS = fileURLToPath(new URL('../../.tmp/artifacts/', import.meta.url))
const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"> & <b>bold</b>'
const PROMPT = `!say Writing the note: ${HOSTILE}\n!call Write {"path":"note.txt","content":"hello from the console\\n"}`

const temp = tempDirs()
let server: ChildProcess | undefined
let base = ''
let workspace = ''
let routesMissing: string | undefined
let browser: Browser | undefined
const serverLog: string[] = []

/** Starts the bundled CLI and resolves with the URL it prints once listening. */
function startServer(cwd: string, home: string): Promise<string> {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0', '--approval', 'ask', '--auth-token', TOKEN], {
    cwd,
    env: { ...process.env, CHIMERA_HOME: home, OTTER_SERVER_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server = child
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverLog.join('')}`)), 20_000)
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      serverLog.push(chunk)
      const m = /listening on (\S+)/.exec(serverLog.join(''))
      if (m) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
    child.stdout!.resume()
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited with ${code}:\n${serverLog.join('')}`))
    })
  })
}

beforeAll(async () => {
  const root = temp.make('chimera-ui-')
  workspace = join(root, 'ws')
  const home = join(root, 'home')
  mkdirSync(workspace)
  mkdirSync(home)
  base = (await startServer(workspace, home)).replace(/\/$/, '')
  const probe = await fetch(`${base}/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })
  if (probe.status !== 200) routesMissing = `the HTTP session routes (issue 8) are not on this branch: GET /sessions answered ${probe.status} ${await probe.text()}`
}, 30_000)

afterAll(async () => {
  await browser?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  temp.cleanup()
})

describe('the web console at /ui', () => {
  it('is served as fixed static files with a strict Content-Security-Policy', async () => {
    const page = await fetch(`${base}/ui`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(UI_CSP)
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await page.text()
    expect(html).toContain('<script type="module" src="/ui/app.js"></script>')
    // No inline script or style for the CSP to allow, and nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=|https?:\/\//)
    const js = await fetch(`${base}/ui/app.js`)
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await js.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)/)
    for (const path of ['/ui/nope.js', '/ui/..%2Fpackage.json', '/ui/%2e%2e/package.json']) {
      const r = await fetch(`${base}${path}`)
      expect(r.status, path).toBe(404)
      expect((await r.json()).error).toBe('not_found')
    }
    expect((await fetch(`${base}/ui/app.js`, { method: 'POST' })).status).toBe(405)
  })

  it('runs a session end to end in chromium: permission approved in the page, file written, diff shown, markup as text, undo', async (ctx) => {
    if (routesMissing) ctx.skip(routesMissing)
    if (!existsSync(CHROMIUM)) throw new Error(`no chromium at ${CHROMIUM} (make system-deps installs Debian's chromium; CHIMERA_CHROMIUM names another)`)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
    page.setDefaultTimeout(15_000)
    const problems: string[] = []
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`))

    await page.goto(`${base}/ui`)
    await page.fill('#token', TOKEN)
    await page.click('#token-form button')
    await page.locator('#status', { hasText: 'connected' }).waitFor()

    await page.fill('#prompt', PROMPT)
    await page.click('#create')
    const allow = page.locator('.permission button[data-decision="allow"]')
    await allow.waitFor()
    expect(existsSync(join(workspace, 'note.txt'))).toBe(false)
    await allow.click()
    await page.locator('.card.ok .state', { hasText: 'done' }).waitFor()
    await page.locator('.result', { hasText: 'turn finished' }).waitFor()
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('hello from the console\n')
    expect(await page.locator('.diff-card h3').textContent()).toBe('edited note.txt')
    expect(await page.locator('pre.diff .add').allTextContents()).toContain('+hello from the console')

    // Markup in the session is text: shown literally, never parsed into elements.
    expect(await page.locator('.msg.user').first().textContent()).toContain(HOSTILE)
    expect(await page.locator('.msg.assistant').first().textContent()).toContain(HOSTILE)
    expect(await page.locator('#events img, #events b').count()).toBe(0)
    expect(await page.title()).toBe('Chimera console')
    expect(await page.locator('#cost').textContent()).toMatch(/^\$\d+\.\d{4} · \d+ tokens$/)

    mkdirSync(ARTIFACTS, { recursive: true })
    await page.screenshot({ path: join(ARTIFACTS, 'ui-console.png'), fullPage: true })

    await page.click('#undo')
    await page.locator('.msg.notice.undo').waitFor()
    expect(await page.locator('.msg.notice.undo').textContent()).toMatch(/^\/undo: rewound 1 turn, 1 file restored/)
    expect(existsSync(join(workspace, 'note.txt'))).toBe(false)
    expect(problems).toEqual([])
  }, 60_000)
})
