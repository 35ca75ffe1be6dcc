/** The session modes, and the one check of a mode name every entry point uses. */
import { ChimeraError, shownId } from '../errors.ts'

export const MODES = ['build', 'plan'] as const
export type Mode = (typeof MODES)[number]

/** `mode` when it names a mode; otherwise `unknown_mode`, listing the modes. */
export function checkMode(mode: string): Mode {
  if (!(MODES as readonly string[]).includes(mode))
    throw new ChimeraError('unknown_mode', `unknown mode ${shownId(mode)}; available: ${MODES.join(', ')}`)
  return mode as Mode
}
