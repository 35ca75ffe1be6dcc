/**
 * The Content-Security-Policy of one reference page: the server's /docs policy (own origin
 * only, no frames, no forms, no fetches elsewhere) plus the sha256 hashes of the page's own
 * inline <script> and <style> elements, so the renderers' single-file pages run without
 * 'unsafe-inline' for scripts. Parsed with parse5 (the HTML parser browsers follow), so the
 * hashed text is what the browser hashes.
 */
import { createHash } from 'node:crypto'
import { parse } from 'parse5'

type Node = {
  nodeName: string
  tagName?: string
  attrs?: { name: string; value: string }[]
  childNodes?: Node[]
  value?: string
  content?: Node
}

const b64 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
/** An empty <style> a library inserts before it adds rules through the CSSOM. */
const EMPTY = b64('')

export function inlineHashes(html: string): { scripts: string[]; styles: string[]; styleAttrs: boolean } {
  const scripts = new Set<string>()
  const styles = new Set<string>([EMPTY])
  let styleAttrs = false
  const walk = (n: Node): void => {
    if (n.attrs?.some((a) => a.name === 'style')) styleAttrs = true
    const text = (n.childNodes ?? []).map((c) => (c.nodeName === '#text' ? (c.value ?? '') : '')).join('')
    if (n.tagName === 'script' && !n.attrs?.some((a) => a.name === 'src')) scripts.add(b64(text))
    if (n.tagName === 'style') styles.add(b64(text))
    for (const c of n.childNodes ?? []) walk(c)
    if (n.content) walk(n.content)
  }
  walk(parse(html) as unknown as Node)
  return { scripts: [...scripts].sort(), styles: [...styles].sort(), styleAttrs }
}

/**
 * `evaluates`: the page compiles code at run time (the AsyncAPI page validates its document with
 * ajv, which builds validators with `new Function`), so it gets 'unsafe-eval' — that page only,
 * never 'unsafe-inline' (docs/decisions/0211).
 */
export function pageCsp(html: string, evaluates = false): string {
  const { scripts, styles, styleAttrs } = inlineHashes(html)
  return [
    "default-src 'none'",
    `script-src 'self'${evaluates ? " 'unsafe-eval'" : ''} ${scripts.join(' ')}`.trim(),
    `style-src 'self' ${styles.join(' ')}`,
    // style="…" attributes in the pre-rendered markup (they cannot run code).
    ...(styleAttrs ? ["style-src-attr 'unsafe-inline'"] : []),
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ')
}
