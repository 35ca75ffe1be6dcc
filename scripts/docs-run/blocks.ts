/**
 * The shell blocks of README.md and docs/*.md, as the docs test runs them (docs/reference.md
 * "Docs that run"): fenced blocks whose info string is bash, sh, shell or console. The line right
 * before a fence may carry a marker comment:
 *   <!-- docs-test: skip REASON -->  not run here (the reason says why: real keys, Zed, …)
 *   <!-- docs-test: server -->       needs `chimera otter serve` on 127.0.0.1:5173 (the test starts one)
 * A `console` block shows commands after `$ ` (a trailing `\` continues a command) and what they
 * print below them; `…` in the shown output stands for any text on that line, and a line of only
 * `…` for any number of lines.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

export const SHELLS = new Set(['bash', 'sh', 'shell', 'console'])

export interface Block {
  file: string
  line: number
  lang: string
  text: string
  skip?: string
  server: boolean
}

export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`)
  return ['README.md', ...docs]
}

export function shellBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split('\n')
  const out: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!)
    if (!open) continue
    const fence = open[2]!
    let j = i + 1
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) j++
    const lang = open[3]!.toLowerCase()
    if (SHELLS.has(lang)) {
      const marker = /^\s*<!--\s*docs-test:\s*(skip|server)\b\s*(.*?)\s*-->\s*$/.exec(lines[i - 1] ?? '')
      out.push({
        file,
        line: i + 1,
        lang,
        text: lines
          .slice(i + 1, j)
          .map((l) => l.slice(open[1]!.length))
          .join('\n'),
        ...(marker?.[1] === 'skip' ? { skip: marker[2] || 'no reason given' } : {}),
        server: marker?.[1] === 'server',
      })
    }
    i = j
  }
  return out
}

export function allBlocks(root: string): Block[] {
  return docFiles(root).flatMap((f) => shellBlocks(f, readFileSync(join(root, f), 'utf8')))
}

/** A console block as a script and the output it shows. */
export function splitConsole(text: string): { script: string; expected: string[] } {
  const script: string[] = []
  const expected: string[] = []
  let continuing = false
  for (const line of text.split('\n')) {
    if (continuing || line.startsWith('$ ')) {
      script.push(continuing ? line : line.slice(2))
      continuing = line.endsWith('\\')
    } else {
      expected.push(line)
    }
  }
  while (expected.length && expected[expected.length - 1]!.trim() === '') expected.pop()
  return { script: script.join('\n'), expected }
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Whether `actual` is what the page shows (`…` wildcards as above); trailing spaces ignored. */
export function matchesShown(expected: string[], actual: string): boolean {
  const lines = actual
    .replace(/\n+$/, '')
    .split('\n')
    .map((l) => l.trimEnd())
  const pattern = expected
    .map((l) => l.trimEnd())
    .map((l) => (l === '…' ? '(?:[^\\n]*\\n)*?' : `${l.split('…').map(escapeRe).join('[^\\n]*')}\\n`))
    .join('')
  return new RegExp(`^${pattern}$`).test(`${lines.join('\n')}\n`)
}
