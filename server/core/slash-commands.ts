/**
 * Prompts that are slash commands, handled by the core on every transport instead of being
 * sent to the model: `/undo`, `/undo N`, `/undo --steps N`, `/redo` (same forms), and custom
 * commands `/name args…` rendered by the session's `CommandRenderer` (`.opencode/command/*.md`).
 * A prompt that starts with `/` but names no known command goes to the model unchanged.
 */

/** Renders custom commands; undefined when there is no command of that name. */
export interface CommandRenderer {
  render(name: string, args: string): string | undefined
}

export type Slash =
  | { kind: 'undo' | 'redo'; steps: number }
  | { kind: 'usage'; message: string }
  | { kind: 'custom'; name: string; arguments: string }

const MAX_STEPS = 1_000_000

/** The slash command a prompt is, if any. */
export function parseSlash(text: string): Slash | undefined {
  const m = /^\/([A-Za-z][\w.-]*)(?:[ \t]+([\s\S]*))?$/.exec(text.trim())
  if (!m) return undefined
  const name = m[1]!
  const rest = (m[2] ?? '').trim()
  if (name !== 'undo' && name !== 'redo') return { kind: 'custom', name, arguments: rest }
  if (rest === '') return { kind: name, steps: 1 }
  const n = /^(?:--steps(?:[ \t]+|=))?(\d+)$/.exec(rest)
  const steps = n ? Number(n[1]) : NaN
  if (!Number.isSafeInteger(steps) || steps < 1 || steps > MAX_STEPS)
    return { kind: 'usage', message: `usage: /${name} [N | --steps N] (N a positive integer), got "/${name} ${rest}"` }
  return { kind: name, steps }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

/** The reply line of `/undo` and `/redo` (docs/http.md: `/undo: rewound 1 turn, 2 files restored (0 remaining)`). */
export function rewindReply(kind: 'undo' | 'redo', turns: number, files: number, remaining: number): string {
  if (turns === 0) return `/${kind}: nothing to ${kind} (0 remaining)`
  return `/${kind}: ${kind === 'undo' ? 'rewound' : 'replayed'} ${plural(turns, 'turn')}, ${plural(files, 'file')} restored (${remaining} remaining)`
}
