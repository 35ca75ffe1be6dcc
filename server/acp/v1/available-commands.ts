/** The slash commands a v1 client is offered (`available_commands_update`): undo, redo and the custom commands. */
import type { SessionManager } from '../../core/manager.ts'

export function availableCommands(
  manager: SessionManager,
  cwd: string,
): { name: string; description: string; input?: { hint: string } }[] {
  const out = [
    { name: 'undo', description: 'Rewind the last turn (messages and files)', input: { hint: '[N]' } },
    { name: 'redo', description: 'Replay the last undone turn', input: { hint: '[N]' } },
  ]
  const renderer = manager.opts.commands?.(cwd) as
    { list?: () => { commands: { name: string; description: string }[] } } | undefined
  try {
    for (const c of renderer?.list?.().commands ?? [])
      out.push({ name: c.name, description: c.description || c.name, input: { hint: 'arguments' } })
  } catch {
    // A broken command directory must not break the session: its problems show on GET /commands.
  }
  return out
}
