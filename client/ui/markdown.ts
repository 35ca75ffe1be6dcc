/**
 * The model's Markdown, rendered safely: `marked` (GFM) turns it into HTML in which any raw HTML
 * the model wrote is escaped (shown as text, never parsed) and images become plain links (the
 * CSP loads no image from elsewhere); DOMPurify then keeps only a small allow-list of tags and
 * attributes (no `style`, no event handlers, only safe URL schemes) and returns DOM nodes, so the
 * page never assigns model output to `innerHTML` itself. See docs/decisions/0250-console-markdown.md.
 */
import DOMPurify from 'dompurify'
import { Marked, type Tokens } from 'marked'

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML blocks and inline tags from the model: text, not markup.
    html: (token: Tokens.HTML | Tokens.Tag) => escapeHtml(token.text),
    image: (token: Tokens.Image) =>
      `<a href="${escapeHtml(token.href)}">${escapeHtml(`image: ${token.text || token.href}`)}</a>`,
  },
})

const ALLOWED_TAGS = [
  ...[
    'a',
    'blockquote',
    'br',
    'code',
    'del',
    'em',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'hr',
    'li',
    'ol',
    'p',
    'pre',
    'strong',
    'ul',
  ],
  ...['table', 'tbody', 'td', 'th', 'thead', 'tr'],
]

let hooked = false
function purifier(): typeof DOMPurify {
  if (!hooked) {
    hooked = true
    // Links open outside the console, without the console's context.
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('target', '_blank')
        node.setAttribute('rel', 'noopener noreferrer nofollow')
      }
    })
  }
  return DOMPurify
}

/** Markdown text → sanitized DOM nodes, ready to append. */
export function renderMarkdown(text: string): DocumentFragment {
  const html = marked.parse(text) as string
  return purifier().sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title', 'start', 'target', 'rel'],
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  })
}
