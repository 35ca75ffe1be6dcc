/**
 * The API reference at `/docs` (docs/reference/, written by `make docs` from specs/; see
 * docs/reference.md), and `GET /` leading to the web console at `/ui`. Like the console
 * (ui.ts), a fixed table of files — the pages listed in docs/reference/manifest.json — read once;
 * no part of the URL reaches the file system. Each page is answered with its own
 * Content-Security-Policy from the manifest: the /docs policy (own origin only, no frames, no
 * forms) plus the hashes of that page's inline scripts and styles, so the renderers'
 * single-file pages run while the console's policy stays as strict as it is.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { H3 } from 'h3'
import type { Logger } from '../log.ts'
import { HttpError, errorResponse } from './errors.ts'
import { checkHost, type GuardOptions } from './guard.ts'
import { uiDirectory } from './ui.ts'

interface Page {
  file: string
  csp: string
}

/**
 * The API reference pages: `dist/docs/` beside `dist/ui/` in the installed package (the package
 * build copies them there), else `docs/reference/` of the checkout the build belongs to.
 */
export function docsDirectory(): string | undefined {
  const ui = uiDirectory()
  if (!ui) return undefined
  const packaged = resolve(ui, '..', 'docs')
  return existsSync(join(packaged, 'manifest.json')) ? packaged : resolve(ui, '..', '..', 'docs', 'reference')
}

const NOT_BUILT = 'the API reference is not in this installation: run `make docs`'

export function mountDocs(app: H3, guard: GuardOptions, logger: Logger, dir = docsDirectory()): void {
  let pages: Map<string, Page> | undefined
  const cache = new Map<string, Buffer>()
  const table = (): Map<string, Page> => {
    if (pages) return pages
    const found = new Map<string, Page>()
    try {
      const manifest = JSON.parse(readFileSync(join(dir ?? '', 'manifest.json'), 'utf8')) as { pages?: Page[] }
      for (const p of manifest.pages ?? []) {
        if (typeof p.file !== 'string' || !/^[a-z0-9-]+\.html$/.test(p.file) || typeof p.csp !== 'string') continue
        found.set(`/docs/${p.file}`, p)
        if (p.file === 'index.html') {
          found.set('/docs', p)
          found.set('/docs/', p)
        }
      }
    } catch (err) {
      logger.debug(`no API reference: ${(err as Error).message}`)
    }
    pages = found
    return found
  }
  const serve = (req: Request): Response => {
    try {
      checkHost(req, guard)
      const pathname = new URL(req.url).pathname
      const all = table()
      const page = all.get(pathname)
      if (!page)
        throw new HttpError(
          'not_found',
          all.size === 0 ? NOT_BUILT : `no route for ${req.method} ${pathname.slice(0, 200)}`,
        )
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${pathname}`, {
          headers: { allow: 'GET, HEAD' },
        })
      let data = cache.get(page.file)
      if (!data) {
        try {
          data = readFileSync(join(dir ?? '', page.file))
        } catch {
          throw new HttpError('not_found', NOT_BUILT)
        }
        cache.set(page.file, data)
      }
      return new Response(
        req.method === 'HEAD' ? null : new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength),
        {
          status: 200,
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'content-security-policy': page.csp,
            'x-content-type-options': 'nosniff',
            'referrer-policy': 'no-referrer',
            'x-frame-options': 'DENY',
            'cache-control': 'no-cache',
          },
        },
      )
    } catch (err) {
      return errorResponse(err, logger)
    }
  }
  app.all('/docs', (event) => serve(event.req as Request))
  app.all('/docs/**', (event) => serve(event.req as Request))
  // The server's front door: the web console.
  app.all('/', (event) => {
    try {
      const req = event.req as Request
      checkHost(req, guard)
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new HttpError('method_not_allowed', `${req.method} is not allowed on /`, {
          headers: { allow: 'GET, HEAD' },
        })
      return new Response(null, { status: 302, headers: { location: '/ui', 'cache-control': 'no-cache' } })
    } catch (err) {
      return errorResponse(err, logger)
    }
  })
}
