/**
 * The API reference at /docs in a real browser: `chimera otter serve` (the bundled CLI) serves
 * docs/reference/; playwright-core drives Debian's chromium to /docs and to every page it links,
 * each behind its own CSP, and finds no console error, no page error and no request leaving the
 * server (the pages work offline). `GET /` leads to /ui; the start-up banner names both URLs.
 * Screenshots go to a temporary directory; their paths are printed.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_BUNDLE } from '../../conformance/harness/targets.ts'
import { tempDirs } from '../../conformance/harness/temp-dirs.ts'
import { docsDirectory } from './docs.ts'

const CHROMIUM = process.env.CHIMERA_CHROMIUM ?? '/usr/bin/chromium'
const temp = tempDirs()
let server: ChildProcess | undefined
let base = ''
let shots = ''
let browser: Browser | undefined
const serverLog: string[] = []
const manifest = JSON.parse(readFileSync(join(docsDirectory()!, 'manifest.json'), 'utf8')) as {
  pages: { file: string; title: string; tool: string; csp: string }[]
}

function startServer(cwd: string, home: string): Promise<string> {
  const child = spawn(process.execPath, [CLI_BUNDLE, 'otter', 'serve', '--port', '0'], {
    cwd,
    env: { ...process.env, CHIMERA_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  server = child
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${serverLog.join('')}`)), 20_000)
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      serverLog.push(chunk)
      const m = /listening on (\S+)[\s\S]*API reference: /.exec(serverLog.join(''))
      if (m && /\/docs\n/.test(serverLog.join(''))) {
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
  const root = temp.make('chimera-docs-')
  mkdirSync(join(root, 'ws'))
  mkdirSync(join(root, 'home'))
  shots = join(root, 'shots')
  mkdirSync(shots)
  base = (await startServer(join(root, 'ws'), join(root, 'home'))).replace(/\/$/, '')
}, 30_000)

afterAll(async () => {
  await browser?.close()
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r))
    server.kill('SIGTERM')
    await exited
  }
  // The screenshots live until the process ends, for whoever runs the test to look at.
  if (!process.env.CHIMERA_KEEP_SHOTS) temp.cleanup()
})

describe('the API reference at /docs', () => {
  it('is announced at start-up with the console, and GET / leads to /ui', async () => {
    expect(serverLog.join('')).toContain(`web console: ${base}/ui · API reference: ${base}/docs`)
    const root = await fetch(`${base}/`, { redirect: 'manual' })
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/ui')
    expect((await fetch(`${base}/`, { method: 'POST' })).status).toBe(405)
  })

  it('serves every page of the manifest with its own CSP and nothing else under /docs', async () => {
    for (const p of manifest.pages) {
      const res = await fetch(`${base}/docs/${p.file}`)
      expect(res.status, p.file).toBe(200)
      expect(res.headers.get('content-security-policy')).toBe(p.csp)
      expect(p.csp).not.toMatch(/script-src[^;]*'unsafe-inline'/)
      // Only the AsyncAPI pages compile validators at run time (docs/decisions/0211).
      if (p.tool !== 'asyncapi') expect(p.csp).not.toMatch(/'unsafe-eval'/)
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      await res.arrayBuffer()
    }
    expect((await fetch(`${base}/docs/../package.json`)).status).toBe(404)
    expect((await fetch(`${base}/docs/manifest.json`)).status).toBe(404)
    expect((await fetch(`${base}/docs/%2e%2e/package.json`)).status).toBe(404)
  })

  it('renders /docs and each reference page in chromium with no console error and no outside request', async () => {
    expect(existsSync(CHROMIUM), `chromium is needed at ${CHROMIUM} (make test-deps, or set CHIMERA_CHROMIUM)`).toBe(
      true,
    )
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    const errors: string[] = []
    const outside: string[] = []
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}`)
    })
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${page.url()}: ${r.status()} for ${r.url()}`)
    })
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}`))
    page.on('request', (r) => {
      const url = r.url()
      if (!url.startsWith(base) && !url.startsWith('data:') && !url.startsWith('blob:') && !url.startsWith('about:'))
        outside.push(url)
    })
    await page.goto(`${base}/docs`, { waitUntil: 'load' })
    const links = await page.locator('a[href^="/docs/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')!))
    const expected = manifest.pages.filter((p) => p.file !== 'index.html').map((p) => `/docs/${p.file}`)
    expect(links.sort()).toEqual(expected.sort())
    await page.screenshot({ path: join(shots, 'docs-index.png') })
    const paths = [join(shots, 'docs-index.png')]
    for (const link of expected) {
      await page.goto(`${base}${link}`, { waitUntil: 'load' })
      // Each renderer draws something named after the document (its title or first heading).
      await page
        .locator('h1:visible, h2:visible')
        .first()
        .waitFor({ state: 'visible', timeout: 60_000 })
        .catch((err: Error) => {
          throw new Error(`${link} drew no heading; errors so far: ${errors.join('\n')}\n${err.message}`)
        })
      await page.waitForTimeout(300)
      // A schema with no title is drawn under the parser's made-up name (`Adheres to
      // <anonymous-schema-50>:`, collapsed or not): every branch of an allOf/anyOf/oneOf in
      // specs/ carries a `title` (a shared schema: its own name).
      const anonymous = await page.evaluate(() => {
        const found: string[] = []
        const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT)
        for (let n = walk.nextNode(); n; n = walk.nextNode())
          if (/<anonymous-schema-/.test(n.textContent ?? '') && !n.parentElement?.closest('script, style'))
            found.push(n.textContent!.trim())
        return found
      })
      expect(anonymous, `${link} draws schemas with no title`).toEqual([])
      const shot = join(
        shots,
        `docs-${link
          .split('/')
          .pop()!
          .replace(/\.html$/, '')}.png`,
      )
      await page.screenshot({ path: shot })
      paths.push(shot)
    }
    process.stdout.write(`screenshots:\n${paths.map((p) => `  ${p}`).join('\n')}\n`)
    expect(errors).toEqual([])
    expect(outside).toEqual([])
  }, 400_000)
})
