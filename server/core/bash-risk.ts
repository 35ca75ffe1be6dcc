/**
 * The Bash risk classifier behind the ferret approval presets (`auto`, `read-only`) and the
 * `risk` of a Bash permission request. Conservative on purpose: `low` only for a command whose
 * every pipeline segment is a known read-only program (with read-only arguments) and that has
 * no redirection into a file, no command or process substitution, no background job and no
 * assignment; `high` for commands that destroy data, escalate privileges, publish or pipe
 * downloads into a shell; `medium` for everything else. It decides whether to ask, never
 * whether something is safe to run unconfined: the sandbox still applies.
 */
import type { Risk } from './permissions.ts'

/** Programs that only read (their own arguments checked below where they can write). */
const READ_ONLY = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'wc',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'find',
  'pwd',
  'echo',
  'printf',
  'which',
  'type',
  'file',
  'stat',
  'du',
  'df',
  'tree',
  'sort',
  'uniq',
  'cut',
  'diff',
  'cmp',
  'true',
  'false',
  'date',
  'uname',
  'whoami',
  'id',
  'basename',
  'dirname',
  'realpath',
  'readlink',
  'nl',
  'tr',
  'column',
  'less',
  'more',
  'sha256sum',
  'md5sum',
  'test',
  '[',
])

/** git subcommands that only read. */
const GIT_READ = new Set([
  'status',
  'diff',
  'log',
  'show',
  'blame',
  'rev-parse',
  'ls-files',
  'grep',
  'describe',
  'shortlog',
  'branch',
  'tag',
  'remote',
])

const HIGH = [
  /(^|\s)rm\s+(-[a-zA-Z]*[rRf]|--recursive|--force)/,
  /(^|[\s;&|])(sudo|su|doas|mkfs(\.\w+)?|dd|shred|shutdown|reboot|halt|poweroff|chown|iptables)(\s|$)/,
  /(^|\s)chmod\s+-R/,
  /(^|\s)git\s+(push|reset\s+--hard|clean\s+-[a-zA-Z]*f|filter-branch)/,
  /(^|\s)(npm|pnpm|yarn|cargo)\s+publish/,
  /(curl|wget)[^|;&]*\|\s*(ba|z|da)?sh\b/,
  />\s*\/dev\/(sd|nvme|hd|vd)/,
  /:\(\)\s*\{/,
]

/** Split on `;`, `&&`, `||`, `|` and newlines (quotes respected), or undefined for a construct we refuse to read. */
function segments(command: string): string[] | undefined {
  const out: string[] = []
  let cur = ''
  let quote: '"' | "'" | undefined
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!
    if (quote) {
      if (c === quote) quote = undefined
      else if (quote === '"' && (c === '$' || c === '`')) return undefined
      else if (c === '\\' && quote === '"') cur += command[++i] ?? ''
      cur += c
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      cur += c
    } else if (c === '\\') cur += c + (command[++i] ?? '')
    else if (c === '`' || c === '$' || c === '>' || c === '<' || c === '(' || c === ')' || c === '{' || c === '}')
      return undefined
    else if (c === '&' && command[i + 1] !== '&') return undefined
    else if (c === ';' || c === '\n' || c === '|' || c === '&') {
      if (command[i + 1] === c) i++
      out.push(cur)
      cur = ''
    } else cur += c
  }
  if (quote) return undefined
  out.push(cur)
  return out.map((s) => s.trim()).filter(Boolean)
}

const words = (segment: string): string[] => segment.split(/\s+/).map((w) => w.replace(/^['"]|['"]$/g, ''))

function readOnlySegment(segment: string): boolean {
  const [cmd, ...args] = words(segment)
  if (!cmd || cmd.includes('=')) return false
  if (cmd === 'git')
    return (
      GIT_READ.has(args.find((a) => !a.startsWith('-')) ?? '') &&
      !args.some((a) => /^(-D|-d|--delete|-m|-M|--set-url|add|rm|remove|rename)$/.test(a))
    )
  if (!READ_ONLY.has(cmd)) return false
  if (cmd === 'find') return !args.some((a) => /^-(exec|execdir|ok|okdir|delete|fprint\w*|fls)$/.test(a))
  if (cmd === 'sort') return !args.some((a) => a === '-o' || a.startsWith('--output'))
  return true
}

export function classifyCommand(command: string): Risk {
  if (HIGH.some((re) => re.test(command))) return 'high'
  const segs = segments(command)
  if (!segs || segs.length === 0) return 'medium'
  return segs.every(readOnlySegment) ? 'low' : 'medium'
}
