/** The package version, shown by `--version`, `/health` and ACP `initialize`. */
import pkg from '../package.json' with { type: 'json' }

export const VERSION: string = pkg.version
