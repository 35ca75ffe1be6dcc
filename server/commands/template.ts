/**
 * Rendering a custom command template (docs/commands.md "Custom slash commands"): `$1`, `$2`, … are the
 * positional arguments, `$NAME` (case-insensitive) a named one, `$ARGUMENTS` the whole argument
 * string; `${1}` and `${NAME}` work too. Substitution is one pass, so a value that contains
 * `$1` is never substituted again. A `$NAME` that is neither a declared argument nor given is
 * left as written (templates may show shell variables); a declared or positional argument that
 * was not given renders empty.
 *
 * Typed arguments (`/name a "b c" key=value`) split like a shell line (shlex, quotes and
 * backslashes); `key=value` tokens whose key is a declared argument are named arguments.
 */
import { join as shellJoin, split } from 'shlex'
import { MAX_USER_MESSAGE_BYTES, messageTooLarge } from '../core/message-limit.ts'

export interface TemplateArgs {
  /** `$1`, `$2`, … */
  positional: readonly string[]
  /** `$NAME`, matched case-insensitively. */
  named: Readonly<Record<string, string>>
  /** `$ARGUMENTS`. */
  all: string
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/
const TOKEN_RE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+)\}|([0-9]+)|([A-Za-z_][A-Za-z0-9_]*))/g

export const isArgName = (s: string): boolean => NAME_RE.test(s) && s.length <= 64

/**
 * The template with every known placeholder replaced. `declared`: the command's argument names.
 * The rendering stops as soon as it passes `maxBytes` (UTF-8), with `message_too_large`: a
 * template that repeats an argument thousands of times is refused before it is built.
 */
export function renderTemplate(
  template: string,
  args: TemplateArgs,
  declared: readonly string[],
  maxBytes = MAX_USER_MESSAGE_BYTES,
): string {
  const named = new Map<string, string>()
  for (const d of declared) named.set(d.toUpperCase(), '')
  for (const [k, v] of Object.entries(args.named)) named.set(k.toUpperCase(), v)
  const sizes = new Map<string, number>()
  const size = (v: string): number => {
    let n = sizes.get(v)
    if (n === undefined) sizes.set(v, (n = Buffer.byteLength(v, 'utf8')))
    return n
  }
  let bytes = 0
  let end = 0
  const count = (piece: string, at: number, length: number): string => {
    bytes += Buffer.byteLength(template.slice(end, at), 'utf8') + size(piece)
    end = at + length
    if (bytes > maxBytes) throw messageTooLarge(`the rendered command (over ${bytes} bytes so far)`, maxBytes)
    return piece
  }
  const out = template.replace(
    TOKEN_RE,
    (whole: string, braced: string | undefined, digits: string | undefined, word: string | undefined, at: number) => {
      const key = braced ?? digits ?? word ?? ''
      if (/^[0-9]+$/.test(key)) {
        const i = Number(key)
        if (i === 0 || !Number.isSafeInteger(i)) return count(whole, at, whole.length)
        return count(args.positional[i - 1] ?? '', at, whole.length)
      }
      const upper = key.toUpperCase()
      if (upper === 'ARGUMENTS') return count(args.all, at, whole.length)
      const v = named.get(upper)
      return count(v === undefined ? whole : v, at, whole.length)
    },
  )
  count('', template.length, 0)
  return out
}

/**
 * Split a typed argument string (`/name …`) into positional and named arguments. Throws on an
 * unbalanced quote (the message says so).
 */
export function parseArgumentString(text: string, declared: readonly string[]): TemplateArgs {
  const tokens = text.trim() === '' ? [] : split(text)
  const names = new Set(declared.map((d) => d.toUpperCase()))
  const positional: string[] = []
  const named: Record<string, string> = {}
  for (const t of tokens) {
    const eq = t.indexOf('=')
    const key = eq > 0 ? t.slice(0, eq) : ''
    if (key && isArgName(key) && names.has(key.toUpperCase())) named[key.toUpperCase()] = t.slice(eq + 1)
    else positional.push(t)
  }
  return { positional, named, all: text.trim() }
}

/** The argument string a user would type for these arguments (recorded on the user message). */
export function argumentString(positional: readonly string[], named: Readonly<Record<string, string>>): string {
  return shellJoin([...positional, ...Object.entries(named).map(([k, v]) => `${k}=${v}`)])
}
