/**
 * Opening exactly the file a path check approved, and nothing else. paths.ts resolves a path to
 * its real path and checks it; between that check and the open, another process may swap a
 * directory on the way for a symlink to outside, or the file for a FIFO or a device. So the file
 * is opened one component at a time from the workspace root, each directory with O_NOFOLLOW
 * (a symlink in between is refused), the last component with O_NOFOLLOW and O_NONBLOCK, and only
 * a regular file is accepted (checked before the open and on the descriptor). On Linux each step
 * goes through `/proc/self/fd/<dir>/<name>`, which resolves `name` in exactly that directory (an
 * `openat` for Node); a new file or directory is created the same way, so it can only be made in
 * the checked directory. Last, the real path of the open descriptor is checked against the
 * workspace and the protected and read-only paths; a file created outside them is removed again.
 * Elsewhere (no /proc) the open is by path and verified by comparing the descriptor with the
 * real path's inode. See docs/decisions/0022.
 */
import { constants, existsSync } from 'node:fs'
import { lstat, mkdir, open, readlink, realpath, stat, unlink, type FileHandle } from 'node:fs/promises'
import { dirname, isAbsolute, relative, sep } from 'node:path'
import { errorCode, errorText } from './outcome.ts'
import { isInside, pathRuleViolation, realPathList } from './paths.ts'
import type { ToolContext } from './types.ts'

/** Where opens are allowed; all paths real and absolute (rules via `realPathList`). */
export interface OpenGuard {
  /** The workspace root (`/` in `danger-full-access`). */
  root: string
  protectedPaths: readonly string[]
  readOnlyPaths: readonly string[]
}

/**
 * The guard for a tool call: the real workspace root (`/` in `danger-full-access`, where only the
 * protected and read-only paths hold) and the context's path rules.
 */
export async function openGuard(
  ctx: Pick<ToolContext, 'sandbox' | 'protectedPaths' | 'readOnlyPaths'>,
  root: string,
): Promise<OpenGuard> {
  return {
    root: ctx.sandbox === 'danger-full-access' ? '/' : root,
    protectedPaths: await realPathList(ctx.protectedPaths),
    readOnlyPaths: await realPathList(ctx.readOnlyPaths),
  }
}

/** How the file is used: `read`, `write` (O_WRONLY) or `update` (O_RDWR). */
export type OpenMode = 'read' | 'write' | 'update'

/** A verified open regular file. */
export interface OpenedFile {
  fh: FileHandle
  /** Its real path, read back from the descriptor. */
  abs: string
  size: number
  /** True when this open created it. */
  created: boolean
}

/** Why an open was refused. `violation` marks an attempt to leave the allowed paths. */
export type OpenFailure = {
  ok: false
  kind: 'missing' | 'directory' | 'not_regular' | 'violation' | 'error'
  reason: string
}

/** Options of {@link openVerified}. */
export interface OpenOptions {
  /** Create the file when it does not exist (write and update only). */
  create?: boolean
  /** Create missing parent directories (with `create`). */
  mkdirs?: boolean
}

const LINUX = process.platform === 'linux'
/** O_PATH (Linux): a handle on a directory that needs no read permission. Not in fs.constants. */
export const O_PATH = LINUX ? 0o10000000 : 0
export const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0
export const O_NONBLOCK = constants.O_NONBLOCK ?? 0
export const O_DIRECTORY = constants.O_DIRECTORY ?? 0
/** True where `/proc/self/fd/<dir>/<name>` resolves `name` in that directory (an `openat`). */
export const USE_PROC_FD = LINUX && existsSync('/proc/self/fd')

const ACCESS: Record<OpenMode, number> = {
  read: constants.O_RDONLY,
  write: constants.O_WRONLY,
  update: constants.O_RDWR,
}

const failure = (kind: OpenFailure['kind'], reason: string): OpenFailure => ({ ok: false, kind, reason })

/** The path the kernel has for descriptor `fd` (Linux). */
export async function fdPath(fd: number): Promise<string> {
  return readlink(`/proc/self/fd/${fd}`)
}

/** Check the real path of what was opened against the guard. */
function checkReal(real: string, guard: OpenGuard, mode: OpenMode): string | undefined {
  if (!isAbsolute(real) || !isInside(guard.root, real))
    return `the file opened for "${real}" lies outside the workspace ${guard.root}`
  return pathRuleViolation(real, guard, mode !== 'read')
}

/**
 * Open `abs` (a real path the caller has checked) under `guard`: a regular file only, reached
 * without following any symlink, its descriptor's real path inside the guard. The caller closes
 * `fh`.
 */
export async function openVerified(
  abs: string,
  guard: OpenGuard,
  mode: OpenMode,
  opts: OpenOptions = {},
): Promise<({ ok: true } & OpenedFile) | OpenFailure> {
  const rel = relative(guard.root, abs)
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    return failure('violation', `"${abs}" is outside the workspace ${guard.root}`)
  if (rel === '') return failure('directory', `${abs} is a directory, not a file`)
  const pre = checkReal(abs, guard, mode)
  if (pre !== undefined) return failure('violation', pre)
  try {
    return USE_PROC_FD
      ? await openByDescriptors(rel.split(sep), guard, mode, opts)
      : await openByPath(abs, guard, mode, opts)
  } catch (e) {
    return failure('error', errorText(e))
  }
}

async function openByDescriptors(
  parts: string[],
  guard: OpenGuard,
  mode: OpenMode,
  opts: OpenOptions,
): Promise<({ ok: true } & OpenedFile) | OpenFailure> {
  const dirFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW
  let dir = await open(guard.root, dirFlags)
  try {
    const rootReal = await fdPath(dir.fd)
    if (rootReal !== guard.root)
      return failure('violation', `the workspace ${guard.root} changed while it was being opened (now ${rootReal})`)
    for (const comp of parts.slice(0, -1)) {
      const at = `/proc/self/fd/${dir.fd}/${comp}`
      let next: FileHandle
      try {
        next = await open(at, dirFlags)
      } catch (e) {
        const code = errorCode(e)
        if (code === 'ENOENT' && opts.create && opts.mkdirs && mode !== 'read') {
          try {
            await mkdir(at, 0o777)
          } catch (m) {
            if (errorCode(m) !== 'EEXIST') throw m
          }
          next = await open(at, dirFlags)
        } else if (code === 'ENOENT') return failure('missing', `${comp} does not exist`)
        else if (code === 'ELOOP')
          return failure(
            'violation',
            `the directory ${comp} on the way is a symbolic link (the path changed after it was checked)`,
          )
        else if (code === 'ENOTDIR') return failure('error', `${comp} is not a directory`)
        else throw e
      }
      await dir.close()
      dir = next
    }
    return await openLast(dir, parts[parts.length - 1] as string, guard, mode, opts)
  } finally {
    await dir.close().catch(() => {})
  }
}

/** Open the last component inside the directory handle `dir`. */
async function openLast(
  dir: FileHandle,
  name: string,
  guard: OpenGuard,
  mode: OpenMode,
  opts: OpenOptions,
): Promise<({ ok: true } & OpenedFile) | OpenFailure> {
  const at = `/proc/self/fd/${dir.fd}/${name}`
  for (let attempt = 0; attempt < 2; attempt++) {
    let exists = true
    try {
      const st = await lstat(at)
      if (st.isSymbolicLink())
        return failure('violation', `${name} is a symbolic link (the path changed after it was checked)`)
      if (st.isDirectory()) return failure('directory', `${name} is a directory, not a file`)
      if (!st.isFile())
        return failure(
          'not_regular',
          `${name} is not a regular file (a FIFO, socket or device); only regular files are read or written`,
        )
    } catch (e) {
      if (errorCode(e) !== 'ENOENT') throw e
      exists = false
    }
    if (!exists && !(opts.create && mode !== 'read')) return failure('missing', `${name} does not exist`)
    const flags = ACCESS[mode] | O_NOFOLLOW | O_NONBLOCK | (exists ? 0 : constants.O_CREAT | constants.O_EXCL)
    let fh: FileHandle
    try {
      fh = await open(at, flags, 0o666)
    } catch (e) {
      const code = errorCode(e)
      if (code === 'EEXIST' || (code === 'ENOENT' && exists)) continue // raced with a create or delete: look again
      if (code === 'ELOOP')
        return failure('violation', `${name} is a symbolic link (the path changed after it was checked)`)
      if (code === 'ENXIO' || code === 'EISDIR') return failure('not_regular', `${name} is not a regular file`)
      throw e
    }
    const undo = async (): Promise<void> => {
      await fh.close().catch(() => {})
      if (!exists) await unlink(at).catch(() => {})
    }
    const st = await fh.stat()
    if (!st.isFile()) {
      await undo()
      return failure(
        'not_regular',
        `${name} is not a regular file (a FIFO, socket or device); only regular files are read or written`,
      )
    }
    const real = await fdPath(fh.fd)
    const broken = checkReal(real, guard, mode)
    if (broken !== undefined) {
      await undo()
      return failure('violation', broken)
    }
    return { ok: true, fh, abs: real, size: st.size, created: !exists }
  }
  return failure('error', `${name} kept changing while it was being opened`)
}

/** Without /proc: open by path (O_NOFOLLOW on the last component), then compare inodes. */
async function openByPath(
  abs: string,
  guard: OpenGuard,
  mode: OpenMode,
  opts: OpenOptions,
): Promise<({ ok: true } & OpenedFile) | OpenFailure> {
  let exists = true
  try {
    const st = await lstat(abs)
    if (st.isSymbolicLink())
      return failure('violation', `${abs} is a symbolic link (the path changed after it was checked)`)
    if (st.isDirectory()) return failure('directory', `${abs} is a directory, not a file`)
    if (!st.isFile())
      return failure(
        'not_regular',
        `${abs} is not a regular file (a FIFO, socket or device); only regular files are read or written`,
      )
  } catch (e) {
    if (errorCode(e) !== 'ENOENT') throw e
    exists = false
  }
  if (!exists && !(opts.create && mode !== 'read')) return failure('missing', `${abs} does not exist`)
  if (!exists && opts.mkdirs) await mkdir(dirname(abs), { recursive: true })
  const fh = await open(
    abs,
    ACCESS[mode] | O_NOFOLLOW | O_NONBLOCK | (exists ? 0 : constants.O_CREAT | constants.O_EXCL),
    0o666,
  )
  const undo = async (): Promise<void> => {
    await fh.close().catch(() => {})
    if (!exists) await unlink(abs).catch(() => {})
  }
  const st = await fh.stat()
  if (!st.isFile()) {
    await undo()
    return failure('not_regular', `${abs} is not a regular file`)
  }
  let real: string
  try {
    real = await realpath(abs)
    const again = await stat(real)
    if (again.ino !== st.ino || again.dev !== st.dev) throw new Error('changed')
  } catch {
    await undo()
    return failure('violation', `${abs} changed while it was being opened`)
  }
  const broken = checkReal(real, guard, mode)
  if (broken !== undefined) {
    await undo()
    return failure('violation', broken)
  }
  return { ok: true, fh, abs: real, size: st.size, created: !exists }
}

/**
 * Read at most `max` bytes from the start of `fh` (a regular file that may still be growing):
 * the bytes and whether there was more.
 */
export async function readBounded(fh: FileHandle, max: number): Promise<{ buf: Buffer; more: boolean }> {
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const want = Math.min(64 * 1024, max + 1 - total)
    if (want <= 0) break
    const buf = Buffer.allocUnsafe(want)
    const { bytesRead } = await fh.read(buf, 0, want, total)
    if (bytesRead === 0) break
    chunks.push(buf.subarray(0, bytesRead))
    total += bytesRead
  }
  const all = Buffer.concat(chunks, total)
  return total > max ? { buf: all.subarray(0, max), more: true } : { buf: all, more: false }
}

/** Replace the whole content of `fh` (opened for write or update) with `data`. */
export async function overwrite(fh: FileHandle, data: Buffer): Promise<void> {
  await fh.truncate(0)
  let off = 0
  while (off < data.length) {
    const { bytesWritten } = await fh.write(data, off, data.length - off, off)
    off += bytesWritten
  }
}
