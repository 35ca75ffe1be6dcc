/**
 * The web console's static files at `/ui` (built by scripts/build.mjs into dist/ui/ from
 * client/ui/): a fixed list of files read once — no path from the URL ever reaches the file
 * system — each answered with a strict Content-Security-Policy (own-origin scripts, styles and
 * fetches only; nothing inline, no frames, no forms posting elsewhere) and no-sniff. The page
 * needs no token to load; every API call it makes carries the one the user enters.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { H3 } from 'h3'
import type { Logger } from '../log.ts'
import { HttpError, errorResponse } from './errors.ts'
import { checkHost, type GuardOptions } from './guard.ts'

export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const FILES: Record<string, { file: string; type: string }> = {
  '/ui': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/ui/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
}

/**
 * The built console beside this module: `dist/ui/` of the nearest ancestor holding a package.json
 * and a built console (the CLI package's server/dist/ui from its bundle, the checkout's dist/ui from
 * the root bundle or from the sources); without a build, that of the nearest package.json.
 */
export function uiDirectory(from = fileURLToPath(import.meta.url)): string | undefined {
  let first: string | undefined
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) {
      const ui = join(dir, 'dist', 'ui')
      if (existsSync(join(ui, 'index.html'))) return ui
      first ??= ui
    }
    if (dirname(dir) === dir) return first
  }
}

export function mountUi(app: H3, guard: GuardOptions, logger: Logger, dir = uiDirectory()): void {
  const cache = new Map<string, Buffer>()
  const read = (file: string): Buffer | undefined => {
    if (!dir) return undefined
    let data = cache.get(file)
    if (!data) {
      try {
        data = readFileSync(join(dir, file))
      } catch {
        return undefined
      }
      cache.set(file, data)
    }
    return data
  }
  const serve = (req: Request): Response => {
    try {
      checkHost(req, guard)
      const pathname = new URL(req.url).pathname
      const entry = Object.hasOwn(FILES, pathname) ? FILES[pathname] : undefined
      if (!entry) throw new HttpError('not_found', `no route for ${req.method} ${pathname}`)
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new HttpError('method_not_allowed', `${req.method} is not allowed on ${pathname}`, {
          headers: { allow: 'GET, HEAD' },
        })
      const data = read(entry.file)
      if (!data) throw new HttpError('not_found', 'the web console is not built: run `node scripts/build.mjs`')
      return new Response(
        req.method === 'HEAD' ? null : new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength),
        {
          status: 200,
          headers: {
            'content-type': entry.type,
            'content-security-policy': UI_CSP,
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
  app.all('/ui', (event) => serve(event.req as Request))
  app.all('/ui/**', (event) => serve(event.req as Request))
}
