/**
 * The web console in a real browser: `chimera otter serve` (the bundled CLI, offline model,
 * started with explicit `--approval ask --permission Bash=allow`, so Write asks and Bash runs
 * whatever the defaults are) serves /ui; playwright-core drives Debian's chromium as a person
 * would: a `!call Write` approved in the page (file written, diff shown, undo), the model's
 * Markdown rendered with script-injection attempts inert, reasoning chunks in one block, a Bash
 * call's output shown while it runs (gated by a file the test creates), a long prompt's title cut
 * short, a failed turn marked, the server restarted under the page (indicator: reconnecting, then
 * connected; a turn sent after the restart appears without a reload), the browser offline and
 * back, the server gone and back with no session open, rename (on the server: seen by another
 * browser context, live, and after a restart), delete, and a 390 px phone with no
 * horizontal overflow. Screenshots go to a temporary directory whose paths are printed. The
 * static route is checked on its own (CSP, fixed files).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { UI_CSP } from '../../server/http/ui.ts'

const CHROMIUM = process.env.CHIMERA_CHROMIUM ?? '/usr/bin/chromium'
const TOKEN = 'ui-test-master-token'
const HOSTILE = '<img src=x onerror="document.title=\'pwned\'"> & <b>bold</b>'
const PROMPT = `!say Writing the note: ${HOSTILE}\n!call Write {"path":"note.txt","content":"hello from the console\\n"}`
const LONG = 'Refactor the billing module so invoices are computed from line items rather than stored totals. '.repeat(
  20,
)

const temp = tempDirs()
let server: ChildProcess | undefined
let base = ''
let port = 0
let workspace = ''
let home = ''
let browser: Browser | undefined
let context: BrowserContext | undefined
let page: Page
const problems: string[] = []
const shots = mkdtempSync(join(tmpdir(), 'chimera-ui-shots-'))

/** Starts the bundled CLI (on `listenPort`, 0 = any) and resolves with the URL it prints once listening. */
function startServer(listenPort: number): Promise<string> {
  const log: string[] = []
  const args = [
    'otter',
    'serve',
    '--port',
    String(listenPort),
    '--approval',
    'ask',
    '--permission',
    'Bash=allow',
    '--auth-token',
    TOKEN,
  ]
  const child = spawn(process.execPath, [CLI_BUNDLE, ...args], {
    cwd: workspace,
    env: { ...process.env, CHIMERA_HOME: home, OTTER_SERVER_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server = child
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${log.join('')}`)), 20_000)
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      log.push(chunk)
      const m = /listening on (\S+)/.exec(log.join(''))
      if (m) {
        clearTimeout(timer)
        resolve(m[1]!.replace(/\/$/, ''))
      }
    })
    child.stdout!.resume()
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited with ${code}:\n${log.join('')}`))
    })
  })
}

async function stopServer(): Promise<void> {
  if (!server || server.exitCode !== null || server.signalCode !== null) return
  const exited = new Promise((r) => server!.once('exit', r))
  server.kill('SIGTERM')
  await exited
}

async function shot(name: string, fullPage = false, of: Page = page): Promise<void> {
  const path = join(shots, `${name}.png`)
  await of.screenshot({ path, fullPage })
  process.stderr.write(`console screenshot: ${path}\n`)
}

/** Starts a session from the page's form and waits until its turn has ended. */
async function startSession(prompt: string): Promise<string> {
  const previous = (await page.locator('#session-id').textContent()) ?? ''
  await page.fill('#prompt', prompt)
  await page.click('#create')
  await page.waitForFunction((p) => document.getElementById('session-id')?.textContent !== p, previous)
  const id = (await page.locator('#session-id').textContent())!
  await page.locator('#events .result').first().waitFor()
  await page.locator(`#sessions li[data-session="${id}"]`).waitFor()
  return id
}

const api = (path: string, init: RequestInit = {}): Promise<Response> =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers },
  })

beforeAll(async () => {
  const root = temp.make('chimera-ui-')
  workspace = join(root, 'ws')
  home = join(root, 'home')
  mkdirSync(workspace)
  mkdirSync(home)
  base = await startServer(0)
  port = Number(new URL(base).port)
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no chromium at ${CHROMIUM} (make system-deps installs Debian's chromium; CHIMERA_CHROMIUM names another)`,
    )
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await context.newPage()
  page.setDefaultTimeout(15_000)
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  // A connection refused or cut while the server is down or the browser offline is expected (a
  // stream cut by the restart's shutdown reads as an incomplete chunked body); any other error is
  // a problem.
  const expected =
    /net::ERR_(CONNECTION_REFUSED|INTERNET_DISCONNECTED|CONNECTION_RESET|EMPTY_RESPONSE|NETWORK_CHANGED|INCOMPLETE_CHUNKED_ENCODING)\b/
  page.on('console', (m) => m.type() === 'error' && !expected.test(m.text()) && problems.push(`console: ${m.text()}`))
  process.stderr.write(`console screenshots go to ${shots}\n`)
}, 40_000)

afterAll(async () => {
  await browser?.close()
  await stopServer()
  temp.cleanup()
})

describe('the web console at /ui', () => {
  it('is served as fixed static files with a strict Content-Security-Policy', async () => {
    const res = await fetch(`${base}/ui`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(res.headers.get('content-security-policy')).toBe(UI_CSP)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const html = await res.text()
    expect(html).toContain('<script type="module" src="/ui/app.js"></script>')
    // No inline script or style for the CSP to allow, and nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=|https?:\/\//)
    const js = await fetch(`${base}/ui/app.js`)
    expect(js.status).toBe(200)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    // No other origin in the bundle but XML namespaces and marked's "report this" message.
    expect(await js.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org\/|github\.com\/markedjs\/)[a-z]/i)
    for (const path of ['/ui/nope.js', '/ui/..%2Fpackage.json', '/ui/%2e%2e/package.json', '/ui/app.js.LEGAL.txt']) {
      const r = await fetch(`${base}${path}`)
      expect(r.status, path).toBe(404)
      expect((await r.json()).error).toBe('not_found')
    }
    expect((await fetch(`${base}/ui/app.js`, { method: 'POST' })).status).toBe(405)
  })

  it('connects, shows the connection state, runs a session: permission approved in the page, file, diff, markup as text, undo', async () => {
    await page.goto(`${base}/ui`)
    await page.fill('#token', TOKEN)
    await page.click('#token-form button')
    await page.locator('#link[data-state=connected]').waitFor()
    expect(await page.locator('#link-text').textContent()).toBe('connected')

    await page.fill('#prompt', PROMPT)
    await page.click('#create')
    const allow = page.locator('.permission button[data-decision="allow"]')
    await allow.waitFor()
    expect(existsSync(join(workspace, 'note.txt'))).toBe(false)
    await shot('desktop-permission')
    await allow.click()
    await page.locator('.card.ok .state', { hasText: 'done' }).waitFor()
    await page.locator('.result.ok', { hasText: 'turn finished' }).waitFor()
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('hello from the console\n')
    expect(await page.locator('.diff-card h3').textContent()).toBe('edited note.txt')
    expect(await page.locator('pre.diff .add').allTextContents()).toContain('+hello from the console')

    // Markup in the session is text: shown literally, never parsed into elements.
    expect(await page.locator('.msg.user').first().textContent()).toContain(HOSTILE)
    expect(await page.locator('.msg.assistant').first().textContent()).toContain(HOSTILE)
    expect(await page.locator('#events img, #events b').count()).toBe(0)
    expect(await page.title()).toBe('Chimera console')
    expect(await page.locator('#cost').textContent()).toMatch(/^\$\d+\.\d{4} · \d+ tokens$/)

    await page.click('#undo')
    await page.locator('.msg.notice.undo').waitFor()
    expect(await page.locator('.msg.notice.undo').textContent()).toMatch(/^\/undo: rewound 1 turn, 1 file restored/)
    expect(existsSync(join(workspace, 'note.txt'))).toBe(false)
  }, 60_000)

  it('renders the model’s Markdown, with script-injection attempts inert', async () => {
    const md = [
      '!say # Plan',
      '!say Some **bold** and `code`, a [safe link](https://example.org/x) and a [bad link](javascript:window.pwned=1).',
      '!say - first item',
      '!say - second item',
      `!say <script>window.pwned=1;document.title='pwned'</script> <img src=x onerror="window.pwned=1">` +
        ` <a href="javascript:window.pwned=1" onclick="window.pwned=1">raw</a>`,
      '!say ![pic](javascript:window.pwned=1)',
    ].join('\n')
    await startSession(md)
    const msg = page.locator('.msg.assistant').last()
    expect(await msg.locator('h1').textContent()).toBe('Plan')
    expect(await msg.locator('strong').textContent()).toBe('bold')
    expect(await msg.locator('code').first().textContent()).toBe('code')
    expect(await msg.locator('li').allTextContents()).toEqual(['first item', 'second item'])
    expect(await msg.locator('a', { hasText: 'safe link' }).getAttribute('href')).toBe('https://example.org/x')
    expect(await msg.locator('a', { hasText: 'safe link' }).getAttribute('rel')).toBe('noopener noreferrer nofollow')
    // Raw HTML from the model is shown as text; no script, image, handler or javascript: URL reaches the DOM.
    expect(await msg.textContent()).toContain("<script>window.pwned=1;document.title='pwned'</script>")
    expect(await msg.textContent()).toContain('<img src=x onerror="window.pwned=1">')
    expect(
      await page.locator('#events script, #events img, #events [onclick], #events [onerror], #events [style]').count(),
    ).toBe(0)
    const hrefs = await msg.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''))
    expect(hrefs.filter((h) => /^\s*javascript:/i.test(h))).toEqual([])
    await msg
      .locator('a', { hasText: 'bad link' })
      .click()
      .catch(() => {})
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined()
    expect(await page.title()).toBe('Chimera console')
    await shot('markdown')
  }, 60_000)

  it('joins reasoning chunks into one block, truncates a long prompt’s title, and shows a Bash call’s output while it runs', async () => {
    const thought =
      'Let me look at the repository layout first, then check where the invoice totals are stored and computed.'
    const gate = join(workspace, 'gate')
    const command = 'echo first line; for i in $(seq 300); do [ -f gate ] && break; sleep 0.1; done; echo second line'
    await page.fill(
      '#prompt',
      `${LONG}\n!think ${thought}\n!say Running the build.\n!call Bash ${JSON.stringify({ command })}`,
    )
    await page.click('#create')
    const card = page.locator('.card.tool', { hasText: 'Bash' }).last()
    // The first line shows while the command still waits on the gate.
    await card.locator('pre.output.live', { hasText: 'first line' }).waitFor()
    expect(await card.getAttribute('class')).toContain('running')
    expect(await card.locator('pre.output').textContent()).not.toContain('second line')
    await shot('desktop-live-tool-output')
    writeFileSync(gate, '')
    await card.locator('.state', { hasText: 'done' }).waitFor()
    await page.locator('#events .result.ok').waitFor()
    expect(await card.locator('pre.output').textContent()).toMatch(/first line\s+second line/)

    // The offline model streams the thought word by word: one block holds all of it.
    const reasoning = page.locator('#events details.reasoning')
    expect(await reasoning.count()).toBe(1)
    expect(await reasoning.locator('.body').textContent()).toBe(thought)

    // The 2,000-character prompt: a two-line title in the list, one line in the bar.
    const id = (await page.locator('#session-id').textContent())!
    const row = page.locator(`#sessions li[data-session="${id}"]`)
    await row.waitFor()
    await expect.poll(() => row.locator('.title').textContent()).toMatch(/^Refactor the billing module .*…$/)
    expect((await row.locator('.title').textContent())!.length).toBeLessThanOrEqual(80)
    expect((await row.boundingBox())!.height).toBeLessThan(90)
    expect((await page.locator('#session-title').boundingBox())!.height).toBeLessThan(32)
    expect(await row.locator('button.open').getAttribute('title')).toContain('Refactor the billing module')
    await shot('desktop-session', true)
  }, 60_000)

  it('marks a failed turn in the session and in the list', async () => {
    const id = await startSession('!fail the provider answered 529 overloaded')
    const marker = page.locator('#events .result.failed')
    await marker.waitFor()
    expect(await marker.textContent()).toBe('Turn failedthe provider answered 529 overloaded')
    expect(await marker.count()).toBe(1)
    await page.click('#refresh')
    await page.locator(`#sessions li[data-session="${id}"] .badge.failed`).waitFor()
    await shot('desktop-failed-turn')
  }, 60_000)

  it('follows the session across a server restart (reconnecting, then connected); a turn added after it shows without a reload', async () => {
    const rows = page.locator('#sessions li')
    const id = (await rows.nth(1).getAttribute('data-session'))!
    await rows.nth(1).locator('button.open').click()
    await page.locator('#session-id', { hasText: id }).waitFor()
    await page.locator('#link[data-state=connected]').waitFor()

    await stopServer()
    await page.locator('#link:not([data-state=connected])').waitFor()
    expect(['reconnecting', 'offline']).toContain(await page.locator('#link').getAttribute('data-state'))
    await shot('desktop-reconnecting')

    base = await startServer(port)
    await page.locator('#link[data-state=connected]').waitFor({ timeout: 20_000 })
    const before = await page.locator('.msg.assistant').count()
    // Another client adds the turn: the page shows it because it still follows the session.
    const body = JSON.stringify({ prompt: '!say after the restart: still **here**' })
    const res = await api(`/sessions/${encodeURIComponent(id)}/turns`, { method: 'POST', body })
    expect(res.status, await res.clone().text()).toBeLessThan(300)
    await page.locator('.msg.assistant', { hasText: 'after the restart: still here' }).waitFor({ timeout: 20_000 })
    expect(await page.locator('.msg.assistant').count()).toBe(before + 1)
    expect(await page.locator('.msg.assistant strong', { hasText: 'here' }).count()).toBe(1)
    await shot('desktop-after-restart')

    // The browser loses its network: offline at once; back online: connected again.
    await context!.setOffline(true)
    await page.locator('#link[data-state=offline]').waitFor()
    await context!.setOffline(false)
    await page.locator('#link[data-state=connected]').waitFor({ timeout: 20_000 })

    // A list that cannot reach the server says so; the message goes once the server answers again
    // (not 8 s later, over a page that is connected).
    const listing = (url: URL) => url.pathname === '/sessions'
    await page.route(listing, (route) => route.abort('connectionrefused'))
    await page.locator('#refresh').click()
    await page.locator('#status.error.shown', { hasText: 'failed' }).waitFor()
    await page.unroute(listing)
    await page.locator('#link[data-state=connected]').waitFor({ timeout: 20_000 })
    expect(await page.locator('#status.error.shown').count(), await page.locator('#status').innerText()).toBe(0)
  }, 90_000)

  it('renames a session on the server: another browser sees it (live on its open session), and it survives a server restart; deletes one', async () => {
    const id = (await page
      .locator('#sessions li')
      .filter({ hasText: 'Refactor the billing' })
      .getAttribute('data-session'))!
    // Another person, in another browser context (no shared storage), has the session open.
    const other = await browser!.newContext({ viewport: { width: 1280, height: 900 } })
    const page2 = await other.newPage()
    page2.on('pageerror', (e) => problems.push(`second page error: ${e.message}`))
    await page2.goto(`${base}/ui`)
    await page2.fill('#token', TOKEN)
    await page2.click('#token-form button')
    await page2.locator(`#sessions li[data-session="${id}"] button.open`).click()
    await page2.locator('#session-id', { hasText: id }).waitFor()
    expect(await page2.locator('#session-title').textContent()).toMatch(/^Refactor the billing/)

    const first = page.locator(`#sessions li[data-session="${id}"]`)
    await first.locator('button.rename').click()
    const patched = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().endsWith(`/sessions/${encodeURIComponent(id)}`),
    )
    await first.locator('input.rename-input').fill('  Billing   refactor ')
    await first.locator('input.rename-input').press('Enter')
    expect((await patched).status()).toBe(200)
    await page.locator(`#sessions li[data-session="${id}"] .title`, { hasText: 'Billing refactor' }).waitFor()
    expect(await page.evaluate(() => localStorage.length)).toBe(0)
    // The other browser: its open session's bar and list follow the session_renamed event.
    await page2.locator('#session-title', { hasText: 'Billing refactor' }).waitFor()
    await page2.locator(`#sessions li[data-session="${id}"] .title`, { hasText: 'Billing refactor' }).waitFor()
    await page2.locator('#events .msg.notice.renamed', { hasText: 'renamed: Billing refactor' }).waitFor()
    await shot('desktop-renamed-in-another-browser', false, page2)
    await other.close()
    // A third context that connects only now lists it too.
    const late = await browser!.newContext()
    const page3 = await late.newPage()
    await page3.goto(`${base}/ui`)
    await page3.fill('#token', TOKEN)
    await page3.click('#token-form button')
    await page3.locator(`#sessions li[data-session="${id}"] .title`, { hasText: 'Billing refactor' }).waitFor()
    await late.close()

    // The title is on disk: after a server restart the reloaded page lists it.
    await stopServer()
    base = await startServer(port)
    await page.reload()
    await page.locator('#link[data-state=connected]').waitFor({ timeout: 20_000 })
    expect(await page.locator(`#sessions li[data-session="${id}"] .title`).textContent()).toBe('Billing refactor')
    expect(
      ((await (await api(`/sessions/${encodeURIComponent(id)}`)).json()) as { summary: { title?: string } }).summary
        .title,
    ).toBe('Billing refactor')
    // A session known only from disk (nothing loaded it since the restart) is renamed too.
    const again = await api(`/sessions/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      body: JSON.stringify({ title: 'Billing refactor (v2)' }),
    })
    expect(again.status, await again.clone().text()).toBe(200)
    expect(((await again.json()) as { title?: string }).title).toBe('Billing refactor (v2)')
    await page.click('#refresh')
    await page.locator(`#sessions li[data-session="${id}"] .title`, { hasText: 'Billing refactor (v2)' }).waitFor()

    // Delete asks for a second click, then calls DELETE /session/{id} and removes the row.
    const victim = page
      .locator('#sessions li')
      .filter({ has: page.locator('.badge.failed') })
      .first()
    const victimId = (await victim.getAttribute('data-session'))!
    await victim.locator('button.open').click()
    await page.locator('#session-id', { hasText: victimId }).waitFor()
    const deleted = page.waitForResponse(
      (r) => r.request().method() === 'DELETE' && r.url().endsWith(`/session/${encodeURIComponent(victimId)}`),
    )
    await victim.locator('button.delete').click()
    expect(await victim.locator('button.delete').textContent()).toBe('Delete?')
    await victim.locator('button.delete').click()
    expect((await deleted).status()).toBe(204)
    await page.locator(`#sessions li[data-session="${victimId}"]`).waitFor({ state: 'detached' })
    expect(await page.locator('#session').isHidden()).toBe(true)
    await page.locator('#status', { hasText: 'session deleted' }).waitFor()
    await shot('desktop', true)
  }, 60_000)

  it('with no session open, a call that finds no server shows it and the page notices when the server is back', async () => {
    expect(await page.locator('#session').isHidden()).toBe(true)
    await stopServer()
    await page.click('#refresh')
    await page.locator('#link:not([data-state=connected])').waitFor()
    await page.locator('#status.error', { hasText: 'listing sessions failed' }).waitFor()
    base = await startServer(port)
    await page.locator('#link[data-state=connected]').waitFor({ timeout: 20_000 })
    await page.locator('#sessions li', { hasText: 'Billing refactor' }).waitFor()
  }, 60_000)

  it('fits a 390 px phone: no horizontal overflow', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.locator('#sessions li', { hasText: 'Billing refactor' }).locator('button.open').click()
    await page.locator('#events .card.tool').first().waitFor()
    const width = await page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth))
    expect(width).toBeLessThanOrEqual(390)
    await shot('phone', true)
    await page.evaluate(() => window.scrollTo(0, 0))
    await shot('phone-top')
    expect(problems).toEqual([])
  }, 60_000)
})
