/**
 * The file primitives of the undo snapshot store: content-addressed blobs (`blobs/<sha256>`,
 * written once, atomically), capturing what a workspace path holds now, and putting a recorded
 * state back — atomically (a temporary file in the same directory, then a rename), never through
 * a symbolic link, never into a directory reached through one, and never over something that is
 * not a regular file.
 */
import { randomUUID } from '../platform/random.ts'
import { crypto } from '../platform/builtins.ts'
import { constants } from 'node:fs'
import { lstat, mkdir, open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { errCode } from './file-log.ts'

/** Files larger than this are recorded as null (docs/http.md: the shadow refuses runaway logs). */
export const MAX_SNAPSHOT_BYTES = 25 * 1024 * 1024

/** What a path held at some point: content (by hash), nothing, or something the store could not record. */
export type Entry = { kind: 'blob'; sha: string } | { kind: 'absent' } | { kind: 'unrecorded'; why: string }

export const ABSENT: Entry = { kind: 'absent' }
const SHA_RE = /^[0-9a-f]{64}$/

export const isSha = (s: unknown): s is string => typeof s === 'string' && SHA_RE.test(s)

/** True for an absolute, normalised path without NUL: the only paths the store records or touches. */
export function isCleanPath(p: unknown): p is string {
  return (
    typeof p === 'string' && p.length > 0 && p.length <= 4096 && !p.includes('\0') && isAbsolute(p) && resolve(p) === p
  )
}

const sha256 = (b: Buffer): string => crypto().createHash('sha256').update(b).digest('hex')

/** The blob directory of one session's store. */
export class Blobs {
  readonly dir: string
  constructor(dir: string) {
    this.dir = dir
  }

  path(sha: string): string {
    if (!isSha(sha)) throw new Error(`invalid blob name ${JSON.stringify(sha)}`)
    return join(this.dir, sha)
  }

  /** Store `data` under its hash (once: identical content shares one blob); returns the hash. */
  async put(data: Buffer): Promise<string> {
    const sha = sha256(data)
    const dest = this.path(sha)
    try {
      await stat(dest)
      return sha
    } catch (err) {
      if (errCode(err) !== 'ENOENT') throw err
    }
    await mkdir(this.dir, { recursive: true })
    await writeAtomic(dest, data, 0o600)
    return sha
  }

  /** A blob's bytes, checked against its name (a damaged blob is refused, never restored). */
  async get(sha: string): Promise<Buffer> {
    const data = await readFile(this.path(sha))
    if (sha256(data) !== sha) throw new Error(`snapshot blob ${sha} is damaged (content does not match its hash)`)
    return data
  }
}

/**
 * Write `data` to a temporary file beside `dest`, then rename it over `dest`. `mode` is set
 * exactly when given (an existing file keeps its mode); otherwise the umask applies to 0666.
 */
async function writeAtomic(dest: string, data: Buffer, mode?: number): Promise<void> {
  const tmp = join(
    dirname(dest),
    `.${basename(dest).slice(0, 40)}.${process.pid}.${randomUUID().slice(0, 8)}.chimera-tmp`,
  )
  const fh = await open(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode ?? 0o666,
  )
  try {
    await fh.writeFile(data)
    if (mode !== undefined) await fh.chmod(mode)
    await fh.close()
    await rename(tmp, dest)
  } catch (err) {
    await fh.close().catch(() => {})
    await unlink(tmp).catch(() => {})
    throw err
  }
}

async function lstatOrNull(p: string) {
  try {
    return await lstat(p)
  } catch (err) {
    const code = errCode(err)
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw err
  }
}

/**
 * Record what `abs` holds now: its content as a blob, `absent`, or `unrecorded` (a symbolic
 * link, not a regular file, larger than `maxBytes`, unreadable). Links are never followed.
 */
export async function capture(abs: string, blobs: Blobs, maxBytes: number): Promise<Entry> {
  if (!isCleanPath(abs)) return { kind: 'unrecorded', why: 'not a clean absolute path' }
  let st
  try {
    st = await lstatOrNull(abs)
  } catch (err) {
    return { kind: 'unrecorded', why: `cannot stat: ${(err as Error).message}` }
  }
  if (!st) return ABSENT
  if (st.isSymbolicLink()) return { kind: 'unrecorded', why: 'a symbolic link' }
  if (!st.isFile()) return { kind: 'unrecorded', why: 'not a regular file' }
  if (st.size > maxBytes) return { kind: 'unrecorded', why: `larger than ${maxBytes} bytes` }
  let data: Buffer
  try {
    const fh = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    try {
      const fst = await fh.stat()
      if (!fst.isFile()) return { kind: 'unrecorded', why: 'not a regular file' }
      if (fst.size > maxBytes) return { kind: 'unrecorded', why: `larger than ${maxBytes} bytes` }
      data = await fh.readFile()
    } finally {
      await fh.close()
    }
  } catch (err) {
    if (errCode(err) === 'ENOENT') return ABSENT
    return { kind: 'unrecorded', why: `cannot read: ${(err as Error).message}` }
  }
  // The file may have grown between the stat and the read.
  if (data.length > maxBytes) return { kind: 'unrecorded', why: `larger than ${maxBytes} bytes` }
  return { kind: 'blob', sha: await blobs.put(data) }
}

/** Why `dir` (or its longest existing ancestor) is reached through a symbolic link, if it is. */
async function linkedAncestor(dir: string): Promise<string | undefined> {
  let p = dir
  for (;;) {
    const st = await lstatOrNull(p)
    if (st) {
      if (!st.isDirectory()) return `${p} is not a directory`
      const real = await realpath(p)
      return real === p ? undefined : `${p} resolves to ${real}`
    }
    const up = dirname(p)
    if (up === p) return `${p} does not exist`
    p = up
  }
}

export type PlaceResult = { kind: 'changed' } | { kind: 'same' } | { kind: 'refused'; why: string }

/**
 * Put `abs` back into the recorded state `target`: write its content, or delete it when it did
 * not exist. Refused (nothing touched): an unrecorded target, a path that is now a symbolic
 * link or not a regular file, a parent reached through a symbolic link.
 */
export async function place(abs: string, target: Entry, blobs: Blobs): Promise<PlaceResult> {
  if (target.kind === 'unrecorded') return { kind: 'refused', why: `its state was not recorded (${target.why})` }
  if (!isCleanPath(abs)) return { kind: 'refused', why: 'not a clean absolute path' }
  const dir = dirname(abs)
  const linked = await linkedAncestor(dir)
  if (linked !== undefined) return { kind: 'refused', why: linked }
  const cur = await lstatOrNull(abs)
  if (cur && cur.isSymbolicLink()) return { kind: 'refused', why: 'it is now a symbolic link' }
  if (cur && !cur.isFile()) return { kind: 'refused', why: 'it is now not a regular file' }
  if (target.kind === 'absent') {
    if (!cur) return { kind: 'same' }
    await unlink(abs)
    return { kind: 'changed' }
  }
  const data = await blobs.get(target.sha)
  if (cur && cur.size === data.length) {
    const now = await readFile(abs).catch(() => undefined)
    if (now && now.equals(data)) return { kind: 'same' }
  }
  await mkdir(dir, { recursive: true })
  await writeAtomic(abs, data, cur ? cur.mode & 0o7777 : undefined)
  return { kind: 'changed' }
}
