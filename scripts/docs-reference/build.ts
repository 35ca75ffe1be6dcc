/**
 * `make docs`: renders docs/reference/ from the specs — the AsyncAPI documents with
 * @asyncapi/cli and its HTML template, the OpenAPI document with Redocly's build-docs, the
 * OpenRPC documents with our own renderer (openrpc-html.ts) — stamps each page with the hashes
 * of its inputs and writes manifest.json (the hashes and each page's CSP, read by the server).
 * The CLIs are installed on demand by `make docs` into .tmp/ (pinned versions in the Makefile).
 *
 * `--check` (make check-docs, no CLI needed): fails when a spec changed since its page was made,
 * a page was edited by hand, or an OpenRPC page differs from what the renderer writes now.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { pageCsp } from './csp.ts'
import { renderIndex } from './index-html.ts'
import { renderOpenRpcPage } from './openrpc-html.ts'
import {
  MANIFEST,
  OUT_DIR,
  PAGES,
  ROOT,
  hashInputs,
  sha256,
  stamp,
  type Manifest,
  type ManifestPage,
  type PageDef,
} from './pages.ts'

const TMP = join(ROOT, '.tmp')
const ASYNCAPI_CLI = join(TMP, 'asyncapi-cli/node_modules/@asyncapi/cli/bin/run')
const ASYNCAPI_TEMPLATE = join(TMP, 'asyncapi-template/node_modules/@asyncapi/html-template')
const REDOCLY_CLI = join(TMP, 'redocly-cli/node_modules/@redocly/cli/bin/cli.js')

/** Puts the stamp right after the doctype (a comment before it is legal, but keep it first-line clean). */
function withStamp(html: string, text: string): string {
  const m = /^\s*<!doctype html>/i.exec(html)
  return m ? `${m[0]}\n${text}${html.slice(m[0].length)}` : `${text}\n${html}`
}

function readSpec(spec: string): Record<string, never> {
  const text = readFileSync(join(ROOT, spec), 'utf8')
  return spec.endsWith('.json') ? JSON.parse(text) : parseYaml(text)
}

/** Runs one of the on-demand CLIs with a throw-away HOME and its analytics off. */
function runTool(args: string[], cwd: string): void {
  const home = mkdtempSync(join(tmpdir(), 'chimera-docs-home-'))
  const metrics = join(home, 'asyncapi-analytics.json')
  writeFileSync(
    metrics,
    JSON.stringify({ analyticsEnabled: 'false', infoMessageShown: 'true', userID: 'chimera-docs' }),
  )
  try {
    execFileSync(process.execPath, args, {
      cwd,
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 600_000,
      env: {
        ...process.env,
        HOME: home,
        CI: 'true',
        ASYNCAPI_METRICS_CONFIG_PATH: metrics,
        REDOCLY_TELEMETRY: 'off',
        REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        DO_NOT_TRACK: '1',
      },
    })
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/**
 * Redoc draws its attribution logo from Redocly's CDN (the only outside load of the page): the
 * image source becomes an empty data: URL, which fails to decode, and Redoc's own onError hides it.
 */
function offlineRedoc(html: string): string {
  // The page names no icon, so the browser would ask for /favicon.ico (a 404 in its console).
  const out = html
    .replace(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g, 'data:,')
    .replace(/<head>/i, '<head><link rel="icon" href="/ui/icon.svg">')
  if (/https:\/\/cdn\.redoc\.ly\//.test(out))
    throw new Error('the Redoc page still loads from cdn.redoc.ly: check offlineRedoc()')
  return out
}

function render(page: PageDef, inputs: Record<string, string>): string {
  const spec = page.spec!
  const out = mkdtempSync(join(tmpdir(), 'chimera-docs-'))
  try {
    if (page.tool === 'openrpc') return renderOpenRpcPage(readSpec(spec), stamp(page, inputs))
    if (page.tool === 'asyncapi') {
      // Relative $refs resolve against the working directory: run beside the spec.
      const dir = join(ROOT, spec, '..')
      const args = [
        ASYNCAPI_CLI,
        'generate',
        'fromTemplate',
        join(ROOT, spec),
        ASYNCAPI_TEMPLATE,
        '-o',
        out,
        '--force-write',
        '--use-new-generator',
        '-p',
        'singleFile=true',
      ]
      runTool(args, dir)
      return withStamp(readFileSync(join(out, 'index.html'), 'utf8'), stamp(page, inputs))
    }
    runTool(
      [
        REDOCLY_CLI,
        'build-docs',
        join(ROOT, spec),
        '--inlineBundle',
        '--title',
        page.title.replace(/`/g, ''),
        '-o',
        join(out, 'index.html'),
      ],
      ROOT,
    )
    return withStamp(offlineRedoc(readFileSync(join(out, 'index.html'), 'utf8')), stamp(page, inputs))
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

function entry(page: PageDef, html: string, inputs: Record<string, string>): ManifestPage {
  return { ...page, inputs, sha256: sha256(html), csp: pageCsp(html, page.tool === 'asyncapi') }
}

const INDEX: PageDef = { file: 'index.html', title: 'Chimera API reference', tool: 'index' }

function build(only: Set<string>): void {
  mkdirSync(OUT_DIR, { recursive: true })
  let previous: ManifestPage[] = []
  try {
    previous = (JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest).pages
  } catch {
    previous = []
  }
  const pages: ManifestPage[] = []
  for (const page of PAGES) {
    const inputs = hashInputs(page.spec!)
    const old = previous.find((p) => p.file === page.file)
    if (only.size > 0 && !only.has(page.file) && old) {
      // Not asked for: kept as it is (its stamp still says what it was made from).
      pages.push(entry(page, readFileSync(join(OUT_DIR, page.file), 'utf8'), old.inputs))
      continue
    }
    process.stderr.write(`docs: ${page.file} from ${page.spec} (${page.tool})\n`)
    const html = render(page, inputs)
    writeFileSync(join(OUT_DIR, page.file), html)
    pages.push(entry(page, html, inputs))
  }
  const index = renderIndex(INDEX.title, pages)
  writeFileSync(join(OUT_DIR, INDEX.file), index)
  const manifest: Manifest = {
    note: 'Written by `make docs` (scripts/docs-reference/build.ts); checked by `make check-docs`.',
    pages: [entry(INDEX, index, {}), ...pages],
  }
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`)
}

function check(): string[] {
  const problems: string[] = []
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest
  } catch (err) {
    return [`docs/reference/manifest.json is missing or unreadable (${(err as Error).message}): run \`make docs\``]
  }
  for (const page of [INDEX, ...PAGES]) {
    const m = manifest.pages.find((p) => p.file === page.file)
    if (!m) {
      problems.push(`docs/reference/${page.file} is not in the manifest: run \`make docs\``)
      continue
    }
    let html: string
    try {
      html = readFileSync(join(OUT_DIR, page.file), 'utf8')
    } catch {
      problems.push(`docs/reference/${page.file} is missing: run \`make docs\``)
      continue
    }
    if (sha256(html) !== m.sha256)
      problems.push(
        `docs/reference/${page.file} was changed after \`make docs\` wrote it (pages are never edited by hand)`,
      )
    if (pageCsp(html, page.tool === 'asyncapi') !== m.csp)
      problems.push(`docs/reference/${page.file}: the CSP in the manifest does not match the page`)
    if (page.spec) {
      const now = hashInputs(page.spec)
      if (JSON.stringify(now) !== JSON.stringify(m.inputs)) {
        const changed = Object.keys({ ...now, ...m.inputs }).filter((k) => now[k] !== m.inputs[k])
        problems.push(
          `docs/reference/${page.file} is stale: ${changed.join(', ')} changed since it was rendered; run \`make docs\``,
        )
      }
      if (page.tool === 'openrpc' && renderOpenRpcPage(readSpec(page.spec), stamp(page, now)) !== html) {
        problems.push(
          `docs/reference/${page.file} differs from what the OpenRPC renderer writes now: run \`make docs\``,
        )
      }
    }
  }
  const pagesNow = manifest.pages.filter((p) => p.file !== INDEX.file)
  if (renderIndex(INDEX.title, pagesNow) !== readFileSync(join(OUT_DIR, INDEX.file), 'utf8'))
    problems.push('docs/reference/index.html differs from what `make docs` writes now')
  return problems
}

const args = process.argv.slice(2)
if (args.includes('--check')) {
  const problems = check()
  for (const p of problems) process.stderr.write(`${p}\n`)
  if (problems.length) process.exit(1)
  process.stderr.write(`docs/reference/ is up to date with specs/ (${PAGES.length + 1} pages)\n`)
} else {
  build(new Set(args.filter((a) => !a.startsWith('-'))))
}
