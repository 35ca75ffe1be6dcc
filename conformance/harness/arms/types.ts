/** What the replayer needs from a transport arm. */
import type { ArmName } from '../transcript.ts'
import type { Violation } from '../sniffer.ts'

export interface Arm {
  readonly name: ArmName
  /** The peer's working directory (stdio arm): `${cwd}` in a transcript's sends. */
  readonly cwd?: string
  /** Send one logical message (a JSON frame, or an HTTP request). */
  send(message: unknown, opts: { invalid?: boolean }): Promise<void>
  /** Send raw bytes, split into `chunks` sizes (stdio framing cases). */
  sendRaw(bytes: Buffer, chunks?: number[]): Promise<void>
  /** The next received item (frame, HTTP response, SSE record), or undefined after `ms`. */
  next(ms: number): Promise<unknown>
  /**
   * The next HTTP reply (an item with a `status`), or undefined after `ms`: stream records that
   * arrived before it stay queued, in order (http and sse arms). A reply and the records of a
   * stream open on another connection race each other; an expectation of the reply waits for it.
   */
  nextReply?(ms: number): Promise<unknown>
  /** Open an SSE stream (sse arm). */
  open?(path: string, headers: Record<string, string>): Promise<void>
  /** Close the open SSE stream (sse arm). */
  close?(): Promise<void>
  /** Close the peer's input (stdio arm). */
  closeInput?(): Promise<void>
  /** Wait for the peer process to exit; its exit code, or undefined on timeout (stdio arm). */
  exitCode?(ms: number): Promise<number | null | undefined>
  /** Contract violations the sniffer saw so far. */
  violations(): Violation[]
  /** Stop everything this arm started; leaves no process or socket behind. */
  dispose(): Promise<void>
}
