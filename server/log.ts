/**
 * The one logger every part of the server receives. On stdio transports stdout is the wire,
 * so the process logger writes to stderr only; library code never touches `console`.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export interface Logger {
  debug(msg: string, data?: unknown): void
  info(msg: string, data?: unknown): void
  warn(msg: string, data?: unknown): void
  error(msg: string, data?: unknown): void
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** A logger that writes one line per record to `sink` (stderr by default). */
export function createLogger(opts: { level?: LogLevel; sink?: (line: string) => void; name?: string } = {}): Logger {
  const min = ORDER[opts.level ?? 'info']
  const sink = opts.sink ?? ((line: string) => process.stderr.write(line))
  const prefix = opts.name ? `[${opts.name}] ` : ''
  const log = (level: LogLevel) => (msg: string, data?: unknown) => {
    if (ORDER[level] < min) return
    const tail = data === undefined ? '' : ` ${safeJson(data)}`
    sink(`${new Date().toISOString()} ${level.toUpperCase()} ${prefix}${msg}${tail}\n`)
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

/** A logger that drops everything (the default for library embedders and tests). */
export const noopLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }

function safeJson(data: unknown): string {
  if (data instanceof Error) return JSON.stringify({ name: data.name, message: data.message })
  try {
    return JSON.stringify(data)
  } catch {
    return String(data)
  }
}

/** Level from `CHIMERA_LOG_LEVEL`, default `info`. */
export function levelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const v = env.CHIMERA_LOG_LEVEL
  return v === 'debug' || v === 'info' || v === 'warn' || v === 'error' ? v : 'info'
}
