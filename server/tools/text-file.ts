/**
 * Reading workspace files as text: the size cap and the binary test shared by Read, Edit and
 * Grep. A file is binary when its first 8 KiB contain a NUL byte (git's heuristic).
 */
import { open, stat } from 'node:fs/promises'
import { errorCode, errorText } from './outcome.ts'

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

/** True when the file at `abs` starts with a NUL byte within its first 8 KiB (reads only that). */
export async function fileLooksBinary(abs: string): Promise<boolean> {
  const fh = await open(abs, 'r')
  try {
    const buf = Buffer.alloc(BINARY_SNIFF_BYTES)
    const { bytesRead } = await fh.read(buf, 0, BINARY_SNIFF_BYTES, 0)
    return looksBinary(buf.subarray(0, bytesRead))
  } finally {
    await fh.close()
  }
}

/** Why a file could not be read as text, in words for the model; `kind` for callers that skip. */
export type TextFileResult =
  | { ok: true; text: string; bytes: number }
  | { ok: false; kind: 'missing' | 'directory' | 'too_large' | 'binary' | 'unreadable'; error: string }

/**
 * Read `abs` as UTF-8 text, refusing directories, files over {@link MAX_TEXT_FILE_BYTES} and
 * binary files. `name` is how the file is named in error messages.
 */
export async function readTextFile(abs: string, name: string): Promise<TextFileResult> {
  let size: number
  try {
    const st = await stat(abs)
    if (st.isDirectory()) return { ok: false, kind: 'directory', error: `${name} is a directory, not a file` }
    if (!st.isFile()) return { ok: false, kind: 'unreadable', error: `${name} is not a regular file` }
    size = st.size
  } catch (e) {
    if (errorCode(e) === 'ENOENT') return { ok: false, kind: 'missing', error: `file not found: ${name}` }
    return { ok: false, kind: 'unreadable', error: `cannot read ${name}: ${errorText(e)}` }
  }
  if (size > MAX_TEXT_FILE_BYTES) {
    return { ok: false, kind: 'too_large', error: `${name} is too large (${size} bytes; the limit is ${MAX_TEXT_FILE_BYTES} bytes)` }
  }
  let buf: Buffer
  try {
    const fh = await open(abs, 'r')
    try {
      buf = await fh.readFile()
    } finally {
      await fh.close()
    }
  } catch (e) {
    return { ok: false, kind: 'unreadable', error: `cannot read ${name}: ${errorText(e)}` }
  }
  if (looksBinary(buf)) return { ok: false, kind: 'binary', error: `${name} appears to be a binary file (NUL bytes in its first 8 KiB); only text files can be read` }
  return { ok: true, text: buf.toString('utf8'), bytes: buf.length }
}
