/**
 * Prompts that are slash commands, handled by the core on every transport instead of being
 * sent to the model: `/undo`, `/undo N`, `/undo --steps N`, `/redo` (same forms), and custom
 * commands `/name args…` rendered by the session's `CommandRenderer` (`.opencode/command/*.md`).
 * A prompt that starts with `/` but names no known command goes to the model unchanged.
 */
import { ChimeraError } from '../errors.ts'

/** Renders custom commands; undefined when there is no command of that name. */
export interface CommandRenderer {
  render(name: string, args: string): string | undefined
  /**
   * Called by the session manager once a session is set up, before it takes prompts: a promise
   * when rendering needs something loaded first (awaited), undefined when it does not.
   */
  prepare?(): Promise<void> | undefined
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

/** What a prompt does: a turn with `message` (rendered from a custom `command`), a rewind, or an error reply. */
export type PromptRoute =
  | { kind: 'turn'; message: string; command?: { name: string; arguments: string } }
  | { kind: 'undo' | 'redo'; steps: number }
  | { kind: 'error'; message: string }

/**
 * Route a prompt: `/undo` and `/redo` rewind, a malformed one is a usage error, a custom
 * command's rendering (or its failure) replaces the text; anything else goes to the model as
 * is. A rendering over the message limit throws `message_too_large`.
 */
export function routePrompt(text: string, commands: CommandRenderer | undefined): PromptRoute {
  const slash = parseSlash(text)
  if (slash?.kind === 'usage') return { kind: 'error', message: slash.message }
  if (slash?.kind === 'undo' || slash?.kind === 'redo') return slash
  if (slash?.kind === 'custom' && commands) {
    try {
      const rendered = commands.render(slash.name, slash.arguments)
      if (rendered !== undefined)
        return { kind: 'turn', message: rendered, command: { name: slash.name, arguments: slash.arguments } }
    } catch (err) {
      if (ChimeraError.is(err, 'message_too_large')) throw err
      return { kind: 'error', message: `/${slash.name}: ${err instanceof Error ? err.message : String(err)}` }
    }
  }
  return { kind: 'turn', message: text }
}
