/** The CLI package's version (server/package.json), shown by `--version`, `/health` and ACP `initialize`. */
import pkg from './package.json' with { type: 'json' }

export const VERSION: string = pkg.version
