/**
 * How CLI commands print their output. stdout is the wire on the stdio transports, so no module
 * writes there on its own: main.ts connects this sink to stdout once, and commands that print
 * (listings, transcripts, rollups) go through `output`.
 */
let sink: ((text: string) => void) | undefined

/** Connect the output (main.ts). */
export function setOutput(fn: (text: string) => void): void {
  sink = fn
}

/** Print `text` (a trailing newline is added when missing). */
export function output(text: string): void {
  if (!sink) throw new Error('CLI output is not connected')
  sink(text.endsWith('\n') ? text : `${text}\n`)
}
