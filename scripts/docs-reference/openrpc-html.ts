/**
 * One static HTML page from an OpenRPC document (specs/openrpc/*): methods (params, result,
 * errors, the document's x- annotations) and components (schemas, errors), schemas shown as
 * JSON with in-page links for `#/components/...` references. No script, one inline style (its
 * hash goes into the page's CSP), nothing loaded from elsewhere — the page works offline behind
 * the server's /docs policy. Output is a pure function of the document (byte-stable), so
 * `make check-docs` re-renders it and compares. Why our own renderer: docs/decisions/0210.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Obj = { [k: string]: Json }

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: Json | undefined): string => (typeof v === 'string' ? v : '')

/** Anchor id of a local reference (`#/components/schemas/X` → `components-schemas-X`). */
const anchor = (ref: string): string => ref.replace(/^#\//, '').replace(/[^A-Za-z0-9_.-]+/g, '-')

/** The inline Markdown the documents use: `code`, **strong**, *emphasis*; everything escaped. */
function inline(text: string): string {
  return esc(text)
    .split(/(`[^`]+`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1
        ? `<code>${part.slice(1, -1)}</code>`
        : part
            .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
            .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, '$1<em>$2</em>'),
    )
    .join('')
}

/** Paragraphs, and `- ` items (at a line start or after a sentence) as lists. */
function prose(text: string): string {
  if (!text) return ''
  return text
    .split(/\n{2,}/)
    .map((p) => {
      const [lead, ...items] = p.split(/(?:^|\s)- (?=\S)/)
      if (items.length === 0) return `<p>${inline(p)}</p>`
      return `${lead!.trim() ? `<p>${inline(lead!.trim())}</p>` : ''}<ul>${items.map((i) => `<li>${inline(i.trim())}</li>`).join('')}</ul>`
    })
    .join('\n')
}

/** Pretty JSON with every `"$ref": "#/..."` turned into a link to that anchor. */
function schemaHtml(schema: Json | undefined): string {
  if (schema === undefined) return ''
  const text = esc(JSON.stringify(schema, null, 2))
  const linked = text.replace(
    /(&quot;\$ref&quot;: &quot;)(#\/[^&]*)(&quot;)/g,
    (_m, a: string, ref: string, b: string) => `${a}<a href="#${anchor(ref)}">${ref}</a>${b}`,
  )
  return `<pre>${linked}</pre>`
}

function refOrInline(v: Json | undefined): { ref?: string; value?: Json } {
  if (isObj(v) && typeof v.$ref === 'string') return { ref: v.$ref }
  return { value: v }
}

function xAnnotations(o: Obj): string {
  const rows = Object.entries(o).filter(([k]) => k.startsWith('x-') && !k.endsWith('-schema'))
  if (rows.length === 0) return ''
  return `<dl class="x">${rows.map(([k, v]) => `<dt>${esc(k)}</dt><dd><code>${esc(typeof v === 'string' ? v : JSON.stringify(v))}</code></dd>`).join('')}</dl>`
}

function method(m: Obj): string {
  const name = str(m.name)
  const params = Array.isArray(m.params) ? m.params.filter(isObj) : []
  const errors = Array.isArray(m.errors) ? m.errors : []
  const out: string[] = [
    `<section class="method" id="method-${esc(anchor(name))}">`,
    `<h3><code>${esc(name)}</code></h3>`,
  ]
  if (m.summary) out.push(`<p class="summary">${esc(str(m.summary))}</p>`)
  out.push(xAnnotations(m), prose(str(m.description)))
  if (params.length) {
    out.push('<h4>Params</h4><table><tr><th>name</th><th>required</th><th>description</th></tr>')
    for (const p of params) {
      out.push(
        `<tr><td><code>${esc(str(p.name))}</code></td><td>${p.required === true ? 'yes' : 'no'}</td><td>${prose(str(p.description))}${schemaHtml(p.schema)}</td></tr>`,
      )
    }
    out.push('</table>')
  }
  if (isObj(m['x-params-schema'])) out.push('<h4>Params schema</h4>', schemaHtml(m['x-params-schema']))
  if (isObj(m.result)) out.push('<h4>Result</h4>', prose(str(m.result.description)), schemaHtml(m.result.schema))
  if (errors.length) {
    out.push('<h4>Errors</h4><ul>')
    for (const e of errors) {
      const { ref, value } = refOrInline(e)
      if (ref) out.push(`<li><a href="#${anchor(ref)}">${esc(ref.split('/').pop() ?? ref)}</a></li>`)
      else if (isObj(value)) out.push(`<li><code>${esc(String(value.code))}</code> ${esc(str(value.message))}</li>`)
    }
    out.push('</ul>')
  }
  out.push('</section>')
  return out.filter(Boolean).join('\n')
}

function components(doc: Obj): string {
  const c = isObj(doc.components) ? doc.components : {}
  const out: string[] = []
  for (const [group, entries] of Object.entries(c)) {
    if (!isObj(entries)) continue
    out.push(`<h2 id="components-${esc(anchor(group))}">Components: ${esc(group)}</h2>`)
    for (const [name, value] of Object.entries(entries)) {
      const id = anchor(`#/components/${group}/${name}`)
      out.push(`<section class="component" id="${esc(id)}"><h3><code>${esc(name)}</code></h3>`)
      if (group === 'errors' && isObj(value))
        out.push(`<p><code>${esc(String(value.code))}</code> ${esc(str(value.message))}</p>`)
      out.push(schemaHtml(value), '</section>')
    }
  }
  return out.join('\n')
}

export const OPENRPC_STYLE = [
  'body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#fff}',
  'nav{position:fixed;top:0;bottom:0;left:0;width:16rem;overflow:auto;padding:1rem;background:#f4f5f8;border-right:1px solid #dde}',
  'nav a{display:block;font:13px ui-monospace,monospace;color:#234;text-decoration:none;padding:1px 0}',
  'main{margin-left:18rem;padding:1rem 2rem;max-width:60rem}',
  'pre{background:#f6f7f9;border:1px solid #e3e5ea;padding:.6rem;overflow:auto;font-size:12px;max-height:28rem}',
  'table{border-collapse:collapse;width:100%}td,th{border:1px solid #e3e5ea;padding:.3rem;vertical-align:top;text-align:left}',
  'section.method{border-top:2px solid #dde;margin-top:1.5rem}dl.x{font-size:13px;color:#555}dl.x dt{float:left;margin-right:.5rem}',
  'code{font-family:ui-monospace,monospace}',
].join('\n')

/** The whole page; `stamp` is the generated-from comment placed after the doctype. */
export function renderOpenRpcPage(doc: Obj, stamp: string): string {
  const info = isObj(doc.info) ? doc.info : {}
  const title = str(info.title) || 'OpenRPC document'
  const methods = Array.isArray(doc.methods) ? doc.methods.filter(isObj) : []
  const nav = methods.map((m) => `<a href="#method-${esc(anchor(str(m.name)))}">${esc(str(m.name))}</a>`).join('\n')
  return [
    '<!DOCTYPE html>',
    stamp,
    '<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="/ui/icon.svg">',
    `<title>${esc(title)}</title>`,
    `<style>${OPENRPC_STYLE}</style>`,
    '</head><body>',
    `<nav><a href="/docs">← all references</a><h4>Methods</h4>\n${nav}\n<h4><a href="#components-schemas">Schemas</a></h4></nav>`,
    '<main>',
    `<h1>${esc(title)}</h1>`,
    `<p>OpenRPC ${esc(str(doc.openrpc))} · version ${esc(str(info.version))}</p>`,
    prose(str(info.description)),
    xAnnotations(doc),
    '<h2 id="methods">Methods</h2>',
    ...methods.map(method),
    components(doc),
    '</main></body></html>',
    '',
  ].join('\n')
}
