/**
 * Reading workspace files as text: the size cap and the binary test shared by Read, Edit and
 * Grep. A file is binary when its first 8 KiB contain a NUL byte (git's heuristic). Files are
 * opened through safe-open.ts: regular files only, never past the workspace boundary.
 */
import type { FileHandle } from 'node:fs/promises'
import { openVerified, readBounded, type OpenFailure, type OpenGuard } from './safe-open.ts'

/** Files larger than this are refused by Read and Edit and skipped by Grep. */
export const MAX_TEXT_FILE_BYTES = 10 * 1024 * 1024

/** How much of the start of a file is checked for NUL bytes. */
export const BINARY_SNIFF_BYTES = 8 * 1024

/** True when the first {@link BINARY_SNIFF_BYTES} bytes of `buf` contain a NUL byte. */
export function looksBinary(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, BINARY_SNIFF_BYTES)
  for (let i = 0; i < n; i++) if (buf[i] === 0) return true
  return false
}

/** True when the open file starts with a NUL byte within its first 8 KiB (reads only that). */
export async function handleLooksBinary(fh: FileHandle): Promise<boolean> {
  const buf = Buffer.alloc(BINARY_SNIFF_BYTES)
  const { bytesRead } = await fh.read(buf, 0, BINARY_SNIFF_BYTES, 0)
  return looksBinary(buf.subarray(0, bytesRead))
}

/** Why a file could not be read as text, in words for the model; `kind` for callers that skip. */
export type TextFileResult =
  | { ok: true; text: string; bytes: number }
  | {
      ok: false
      kind: 'missing' | 'directory' | 'too_large' | 'binary' | 'unreadable' | 'not_regular' | 'violation'
      error: string
    }

/** The text-file error for a refused open of the file called `name`. */
export function openFailureText(f: OpenFailure, name: string): TextFileResult & { ok: false } {
  switch (f.kind) {
    case 'missing':
      return { ok: false, kind: 'missing', error: `file not found: ${name}` }
    case 'directory':
      return { ok: false, kind: 'directory', error: `${name} is a directory, not a file` }
    case 'not_regular':
      return {
        ok: false,
        kind: 'not_regular',
        error: `${name} is not a regular file (a FIFO, socket or device); only regular files can be read or written`,
      }
    case 'violation':
      return { ok: false, kind: 'violation', error: f.reason }
    default:
      return { ok: false, kind: 'unreadable', error: `cannot read ${name}: ${f.reason}` }
  }
}

/**
 * Read the open regular file `fh` (of `size` bytes at open time) as UTF-8 text, refusing files
 * over {@link MAX_TEXT_FILE_BYTES} (also when it grew after the open) and binary files.
 */
export async function readTextFrom(fh: FileHandle, size: number, name: string): Promise<TextFileResult> {
  const tooLarge = (n: number | string): TextFileResult => ({
    ok: false,
    kind: 'too_large',
    error: `${name} is too large (${n} bytes; the limit is ${MAX_TEXT_FILE_BYTES} bytes)`,
  })
  if (size > MAX_TEXT_FILE_BYTES) return tooLarge(size)
  let read: { buf: Buffer; more: boolean }
  try {
    read = await readBounded(fh, MAX_TEXT_FILE_BYTES)
  } catch (e) {
    return {
      ok: false,
      kind: 'unreadable',
      error: `cannot read ${name}: ${e instanceof Error ? e.message : String(e)}`,
    }
  }
  if (read.more) return tooLarge(`more than ${MAX_TEXT_FILE_BYTES}`)
  const buf = read.buf
  if (looksBinary(buf))
    return {
      ok: false,
      kind: 'binary',
      error: `${name} appears to be a binary file (NUL bytes in its first 8 KiB); only text files can be read`,
    }
  return { ok: true, text: buf.toString('utf8'), bytes: buf.length }
}

/**
 * Read `abs` (a checked real path) as text through a verified open under `guard`. `name` is how
 * the file is named in error messages.
 */
export async function readTextFile(abs: string, name: string, guard: OpenGuard): Promise<TextFileResult> {
  const opened = await openVerified(abs, guard, 'read')
  if (!opened.ok) return openFailureText(opened, name)
  try {
    return await readTextFrom(opened.fh, opened.size, name)
  } finally {
    await opened.fh.close().catch(() => {})
  }
}
