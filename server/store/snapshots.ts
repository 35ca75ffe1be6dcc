/**
 * File-level undo/redo (docs/undo.md "File-level undo", docs/core.md): the content-addressed shadow
 * store of one session, the core's `FileHistory`. Layout under `<root>/<session-id>/`:
 *
 *   state.json                      committed turns (runs of snap numbers, oldest first), `head`
 *                                   (how many are applied: the undo position), an operation in
 *                                   progress and `empty`: the snaps of turns that changed no file
 *                                   (no directory); snapshot-state.ts reads and writes it
 *   pending.json                    pre-images the running turn captured (survives a crash)
 *   blobs/<sha256>                  file contents, deduplicated across turns
 *   snaps/<snap-id>/manifest.json   {abs_path: sha256 | null}: the files the turn changed, after it
 *   snaps/<snap-id>/before.json     {abs_path: sha256 | null}: the same files before it
 *   snaps/<snap-id>/meta.json       when, and which nulls mean "not recorded" (over 25 MiB, not a
 *                                   regular file) rather than "did not exist"
 *   snaps/<snap-id>/displaced.json  what the last undo of the turn replaced: redo puts exactly that back
 *
 * Undo puts the turn's files back to `before` (a file that did not exist is deleted); redo puts
 * back what the undo displaced. Only recorded paths are ever touched, and never a file whose
 * current content could not be recorded (undo must stay redoable). A commit after an undo
 * discards the redo branch and the blobs only it used. Every file is replaced atomically; an
 * operation cut short by a crash is finished when the store is next opened.
 */
import { randomUUID } from '../platform/random.ts'
import { readdir, rename, rm, mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { FileHistory } from '../core/file-history.ts'
import { noopLogger, type Logger } from '../log.ts'
import { errCode, readJsonFile, writeJsonAtomic } from './file-log.ts'
import { chimeraHome, sessionDir } from './paths.ts'
import { ABSENT, Blobs, MAX_SNAPSHOT_BYTES, capture, isCleanPath, isSha, place, type Entry } from './snapshot-files.ts'
import type { SessionMeta } from './types.ts'
import {
  committed,
  encodeState,
  freshState,
  isEmptySnap,
  isPlainObject,
  parseState,
  snapId,
  snapNumber,
  type Op,
  type State,
} from './snapshot-state.ts'

/** `CHIMERA_SNAPSHOT_ROOT`, else `<home>/snapshots`. */
export function snapshotRoot(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const v = env.CHIMERA_SNAPSHOT_ROOT
  return v !== undefined && v !== '' ? resolve(v) : join(home, 'snapshots')
}

export interface SnapshotHistoryOptions {
  /** CHIMERA_HOME (default from the environment); the root is `<home>/snapshots` unless overridden. */
  home?: string
  /** The snapshot root itself (default `snapshotRoot(home)`). */
  root?: string
  env?: NodeJS.ProcessEnv
  logger?: Logger
  /** Files larger than this are recorded as null (default 25 MiB). */
  maxFileBytes?: number
}

/** The default `ManagerOptions.history`: one snapshot store per session under the snapshot root. */
export function snapshotHistory(o: SnapshotHistoryOptions = {}): (meta: SessionMeta) => FileHistory {
  const env = o.env ?? process.env
  const root = o.root ?? snapshotRoot(o.home ?? chimeraHome(env), env)
  return (meta) =>
    new FileSnapshotStore({
      root,
      sessionId: meta.session_id,
      ...(o.logger ? { logger: o.logger } : {}),
      ...(o.maxFileBytes !== undefined ? { maxFileBytes: o.maxFileBytes } : {}),
    })
}

interface Snap {
  /** The snap's number; its directory is `snapId(n)`. */
  n: number
  before: Map<string, Entry>
  after: Map<string, Entry>
  displaced?: { nonce: string; files: Map<string, Entry> }
  /** The snap's files could not be read back: its turn moves, its files are left alone. */
  damaged?: string
}

export interface RewindFiles {
  turns: number
  /** Absolute paths written back or deleted. */
  files: string[]
  /** Recorded paths left as they are, and why. */
  skipped: { path: string; why: string }[]
}

/** `{path: sha | null}` plus the paths whose null means "not recorded", from entries. */
function toRecord(m: ReadonlyMap<string, Entry>): {
  files: Record<string, string | null>
  unrecorded: Record<string, string>
} {
  const files: Record<string, string | null> = {}
  const unrecorded: Record<string, string> = {}
  for (const [p, e] of m) {
    files[p] = e.kind === 'blob' ? e.sha : null
    if (e.kind === 'unrecorded') unrecorded[p] = e.why
  }
  return { files, unrecorded }
}

/** Entries from a stored `{path: sha | null}` map; throws on anything but clean paths and hashes. */
function fromRecord(files: unknown, unrecorded: unknown, what: string): Map<string, Entry> {
  if (!isPlainObject(files)) throw new Error(`${what}: not an object`)
  const un = isPlainObject(unrecorded) ? unrecorded : {}
  const out = new Map<string, Entry>()
  for (const [p, v] of Object.entries(files)) {
    if (!isCleanPath(p))
      throw new Error(`${what}: ${JSON.stringify(String(p).slice(0, 200))} is not a clean absolute path`)
    if (v === null) out.set(p, Object.hasOwn(un, p) ? { kind: 'unrecorded', why: String(un[p]).slice(0, 200) } : ABSENT)
    else if (isSha(v)) out.set(p, { kind: 'blob', sha: v })
    else throw new Error(`${what}: the value of ${p} is neither a sha256 nor null`)
  }
  return out
}

export interface FileSnapshotStoreOptions {
  root: string
  sessionId: string
  logger?: Logger
  maxFileBytes?: number
}

/** The snapshot store of one session (docs/http.md's `FileSnapshotStore`). */
export class FileSnapshotStore implements FileHistory {
  readonly dir: string
  readonly #logger: Logger
  readonly #max: number
  readonly #blobs: Blobs
  #state: State | undefined
  #pending = new Map<string, Entry>()
  readonly #snaps = new Map<number, Snap>()
  #queue: Promise<unknown> = Promise.resolve()
  /** The session's directory was made by this store (no mkdir before each state write). */
  #dirMade = false
  /** pending.json may exist on disk (a commit removes it only then). */
  #pendingOnDisk = true

  constructor(o: FileSnapshotStoreOptions) {
    this.dir = sessionDir(o.root, o.sessionId)
    this.#logger = o.logger ?? noopLogger
    this.#max = o.maxFileBytes ?? MAX_SNAPSHOT_BYTES
    this.#blobs = new Blobs(join(this.dir, 'blobs'))
  }

  /** Operations run one at a time, in call order. */
  #run<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn)
    this.#queue = run.catch(() => {})
    return run
  }

  willChange(abs: string): Promise<void> {
    return this.#run(async () => {
      await this.#open()
      if (this.#pending.has(abs)) return
      if (!isCleanPath(abs)) {
        this.#logger.warn('undo snapshots: ignoring a path that is not clean and absolute', {
          path: String(abs).slice(0, 200),
        })
        return
      }
      this.#pending.set(abs, await capture(abs, this.#blobs, this.#max))
      await this.#savePending()
    })
  }

  commitTurn(changed: readonly string[]): Promise<void> {
    return this.#run(async () => {
      const st = await this.#open()
      await this.#commit(st, [...this.#pending.keys(), ...changed.filter((p) => isCleanPath(p))])
    })
  }

  undo(n: number): Promise<RewindFiles> {
    return this.#run(async () => {
      const st = await this.#open()
      const k = Math.max(0, Math.min(Math.floor(n), st.head))
      if (k === 0) return { turns: 0, files: [], skipped: [] }
      return this.#move(st, 'undo', st.head - k)
    })
  }

  redo(n: number): Promise<RewindFiles> {
    return this.#run(async () => {
      const st = await this.#open()
      const k = Math.max(0, Math.min(Math.floor(n), st.snaps.length - st.head))
      if (k === 0) return { turns: 0, files: [], skipped: [] }
      return this.#move(st, 'redo', st.head + k)
    })
  }

  counts(): Promise<{ undoable: number; redoable: number }> {
    return this.#run(async () => {
      const st = await this.#open()
      return { undoable: st.head, redoable: st.snaps.length - st.head }
    })
  }

  /**
   * Line the position up with the session's messages after a restart (FileHistory.align): a turn
   * the process ended before its snapshot was taken (the session started one turn more than
   * this store ever committed) is committed now, with the pre-images it captured; a rewind whose
   * `undo` / `redo` event was never written (same turns on both sides, another position) is
   * moved back to where the messages are. Any other difference is left alone: the core rewinds
   * at most what both sides can.
   */
  align(messages: { undoable: number; redoable: number; turns: number }): Promise<void> {
    return this.#run(async () => {
      let st = await this.#open()
      const { undoable: u, redoable: r, turns } = messages
      if (turns === st.next) {
        this.#logger.warn('undo snapshots: committing the turn the process ended before its snapshot', {
          dir: this.dir,
          files: this.#pending.size,
        })
        await this.#commit(st, [...this.#pending.keys()])
        st = this.#state!
      }
      if (u + r === st.snaps.length && u !== st.head) {
        this.#logger.warn('undo snapshots: moving files to the position the session recorded', {
          dir: this.dir,
          from: st.head,
          to: u,
        })
        await this.#move(st, u < st.head ? 'undo' : 'redo', u)
      }
    })
  }

  clear(): Promise<void> {
    return this.#run(async () => {
      await rm(this.dir, { recursive: true, force: true })
      this.#state = freshState()
      this.#pending.clear()
      this.#snaps.clear()
      this.#dirMade = false
      this.#pendingOnDisk = false
    })
  }

  /** State from disk on first use; finishes an operation a crash cut short and drops orphans. */
  async #open(): Promise<State> {
    if (this.#state) return this.#state
    const r = await readJsonFile(join(this.dir, 'state.json'))
    let st = freshState()
    if (r.kind === 'ok') {
      try {
        st = parseState(r.value)
      } catch (err) {
        await this.#setAside(`damaged state: ${(err as Error).message}`)
      }
    } else if (r.kind === 'bad') {
      await this.#setAside(`unreadable state: ${r.reason}`)
    }
    this.#state = st
    await this.#loadPending()
    if (st.op) {
      this.#logger.warn('undo snapshots: finishing an operation a restart interrupted', {
        dir: this.dir,
        op: st.op.kind,
        from: st.op.from,
        to: st.op.to,
      })
      await this.#move({ ...st, head: st.op.from }, st.op.kind, st.op.to, st.op)
    }
    await this.#dropOrphans()
    return this.#state
  }

  /** A store that cannot be read is moved aside (kept for inspection) and a fresh one begins. */
  async #setAside(why: string): Promise<void> {
    const dest = `${this.dir}.damaged-${Date.now()}-${randomUUID().slice(0, 8)}`
    this.#logger.error('undo snapshots: store set aside, undo history starts afresh', {
      dir: this.dir,
      moved_to: dest,
      why,
    })
    await rename(this.dir, dest).catch(() => rm(this.dir, { recursive: true, force: true }))
  }

  async #loadPending(): Promise<void> {
    this.#pending.clear()
    const r = await readJsonFile(join(this.dir, 'pending.json'))
    this.#pendingOnDisk = r.kind !== 'missing'
    if (r.kind !== 'ok') return
    try {
      const v = r.value as { files?: unknown; unrecorded?: unknown }
      this.#pending = fromRecord(v.files, v.unrecorded, 'pending.json')
    } catch (err) {
      // Without the pre-images the files of the interrupted turn cannot be rewound.
      this.#logger.error('undo snapshots: pending.json is damaged; the interrupted turn cannot be undone', {
        dir: this.dir,
        error: (err as Error).message,
      })
    }
  }

  async #savePending(): Promise<void> {
    await this.#makeDir()
    this.#pendingOnDisk = true
    await writeJsonAtomic(join(this.dir, 'pending.json'), toRecord(this.#pending))
  }

  async #saveState(st: State): Promise<void> {
    await this.#makeDir()
    await writeJsonAtomic(join(this.dir, 'state.json'), encodeState(st))
    this.#state = st
  }

  /** The session's directory, made once by this store (a rewrite that finds it gone makes it again). */
  async #makeDir(): Promise<void> {
    if (this.#dirMade) return
    await mkdir(this.dir, { recursive: true })
    this.#dirMade = true
  }

  #snapDir(n: number): string {
    return join(this.dir, 'snaps', snapId(n))
  }

  /** A snap, read (and validated) once. A damaged one is returned empty, marked `damaged`. */
  async #snap(n: number): Promise<Snap> {
    const id = snapId(n)
    // A turn that changed no file: nothing to read, and nothing kept (a chat-only session of
    // thousands of turns holds no object per turn). Asked before the cache, which holds only
    // snaps of turns that changed files.
    if (this.#state && isEmptySnap(this.#state, n)) return { n, before: new Map(), after: new Map() }
    const cached = this.#snaps.get(n)
    if (cached) return cached
    const dir = this.#snapDir(n)
    const read = async (name: string) => {
      const r = await readJsonFile(join(dir, name))
      if (r.kind === 'ok') return r.value
      throw new Error(`${id}/${name}: ${r.kind === 'bad' ? r.reason : 'missing'}`)
    }
    let snap: Snap
    try {
      const meta = (await read('meta.json')) as { unrecorded?: { before?: unknown; after?: unknown } }
      snap = {
        n,
        before: fromRecord(await read('before.json'), meta.unrecorded?.before, `${id}/before.json`),
        after: fromRecord(await read('manifest.json'), meta.unrecorded?.after, `${id}/manifest.json`),
      }
      const d = await readJsonFile(join(dir, 'displaced.json'))
      if (d.kind === 'ok') {
        const v = d.value as { nonce?: unknown; files?: unknown; unrecorded?: unknown }
        if (typeof v.nonce === 'string')
          snap.displaced = { nonce: v.nonce, files: fromRecord(v.files, v.unrecorded, `${id}/displaced.json`) }
      }
    } catch (err) {
      this.#logger.error('undo snapshots: a turn snapshot is damaged; its files will not be touched', {
        dir: this.dir,
        error: (err as Error).message,
      })
      snap = { n, before: new Map(), after: new Map(), damaged: (err as Error).message }
    }
    this.#snaps.set(n, snap)
    return snap
  }

  /** The latest applied record of `abs` (a changed file whose pre-image was never captured). */
  async #lastKnown(st: State, abs: string): Promise<Entry> {
    for (let i = st.head - 1; i >= 0; i--) {
      const e = (await this.#snap(st.snaps[i]!)).after.get(abs)
      if (e) return e
    }
    return { kind: 'unrecorded', why: 'changed without a recorded prior state' }
  }

  /** Commit the running turn's snap (state.json lists it; a turn that changed files also has a directory). */
  async #commit(st: State, paths: string[]): Promise<void> {
    const files = [...new Set(paths)].sort()
    const before = new Map<string, Entry>()
    const after = new Map<string, Entry>()
    for (const f of files) {
      before.set(f, this.#pending.get(f) ?? (await this.#lastKnown(st, f)))
      after.set(f, await capture(f, this.#blobs, this.#max))
    }
    const n = st.next
    const id = snapId(n)
    // A turn that changed no file is only listed in state.json (`empty`): no directory. Its
    // state.json write is kept: the history must count every turn the messages count, and a turn
    // closed without running (a prompt that never ran) has no snap, so the count alone cannot
    // say which turns were empty after a restart.
    const empty = files.length === 0
    if (!empty) {
      const b = toRecord(before)
      const a = toRecord(after)
      // The snap directory appears whole (written aside, then renamed into place).
      const snapsDir = join(this.dir, 'snaps')
      const tmp = join(snapsDir, `.tmp-${id}-${randomUUID().slice(0, 8)}`)
      await mkdir(tmp, { recursive: true })
      await writeJsonAtomic(join(tmp, 'before.json'), b.files)
      await writeJsonAtomic(join(tmp, 'manifest.json'), a.files)
      await writeJsonAtomic(join(tmp, 'meta.json'), {
        created_at: new Date().toISOString(),
        unrecorded: { before: b.unrecorded, after: a.unrecorded },
      })
      await rename(tmp, this.#snapDir(n))
    }
    const dropped = st.snaps.slice(st.head)
    // Kept once the state lists it: a commit whose state write failed leaves `next` where it
    // was, and the next commit takes the same number.
    this.#snaps.delete(n)
    await this.#saveState(committed(st, empty))
    if (!empty) this.#snaps.set(n, { n, before, after })
    this.#pending.clear()
    if (this.#pendingOnDisk) {
      await rm(join(this.dir, 'pending.json'), { force: true })
      this.#pendingOnDisk = false
    }
    if (dropped.length > 0) {
      for (const d of dropped) await this.#removeSnap(d)
      await this.#collectBlobs()
    }
  }

  async #removeSnap(n: number): Promise<void> {
    this.#snaps.delete(n)
    await rm(this.#snapDir(n), { recursive: true, force: true })
  }

  /**
   * Move the position from `st.head` to `to`, rewinding (undo) or replaying (redo) each turn's
   * files in order. The intent is saved first, so a crash part-way is finished on the next open
   * (`resume`): the end state of every file does not depend on how far the first attempt got.
   */
  async #move(st: State, kind: 'undo' | 'redo', to: number, resume?: Op): Promise<RewindFiles> {
    const from = st.head
    const op: Op = resume ?? { kind, from, to, nonce: randomUUID() }
    if (!resume) await this.#saveState({ ...st, op })
    const restored = new Set<string>()
    const skipped: { path: string; why: string }[] = []
    const put = async (path: string, target: Entry): Promise<void> => {
      try {
        const r = await place(path, target, this.#blobs)
        if (r.kind === 'changed') restored.add(path)
        else if (r.kind === 'refused') skipped.push({ path, why: r.why })
      } catch (err) {
        skipped.push({ path, why: (err as Error).message })
      }
    }
    if (kind === 'undo') {
      for (let i = from - 1; i >= to; i--) {
        const snap = await this.#snap(st.snaps[i]!)
        let displaced = snap.displaced?.nonce === op.nonce ? snap.displaced.files : undefined
        if (!displaced) {
          displaced = new Map<string, Entry>()
          for (const p of snap.before.keys()) displaced.set(p, await capture(p, this.#blobs, this.#max))
          snap.displaced = { nonce: op.nonce, files: displaced }
          // A turn that changed no file displaces nothing (and has no directory to record it in).
          if (!isEmptySnap(st, snap.n))
            await writeJsonAtomic(join(this.#snapDir(snap.n), 'displaced.json'), {
              nonce: op.nonce,
              ...toRecord(displaced),
            })
        }
        for (const [p, target] of snap.before) {
          const now = displaced.get(p)
          // An undo that replaced content it could not record could never be redone.
          if (now?.kind === 'unrecorded')
            skipped.push({ path: p, why: `its current content cannot be recorded (${now.why})` })
          else await put(p, target)
        }
      }
    } else {
      for (let i = from; i < to; i++) {
        const snap = await this.#snap(st.snaps[i]!)
        for (const [p, target] of snap.after) await put(p, snap.displaced?.files.get(p) ?? target)
      }
    }
    await this.#saveState({ next: st.next, snaps: st.snaps, head: to, empty: st.empty })
    if (kind === 'redo') {
      for (let i = from; i < to; i++) {
        const snap = await this.#snap(st.snaps[i]!)
        if (snap.displaced) {
          snap.displaced = undefined
          await rm(join(this.#snapDir(snap.n), 'displaced.json'), { force: true })
        }
      }
      await this.#collectBlobs()
    }
    if (skipped.length > 0)
      this.#logger.warn(`undo snapshots: ${kind} left ${skipped.length} file(s) as they are`, {
        dir: this.dir,
        skipped,
      })
    return { turns: Math.abs(from - to), files: [...restored], skipped }
  }

  /** Snap directories no state refers to (a crash mid-commit) are removed. */
  async #dropOrphans(): Promise<void> {
    let names: string[]
    try {
      names = await readdir(join(this.dir, 'snaps'))
    } catch (err) {
      if (errCode(err) === 'ENOENT') return
      throw err
    }
    const known = new Set(this.#state?.snaps ?? [])
    const orphans = names.filter((name) => {
      const n = snapNumber(name)
      return n === undefined || !known.has(n)
    })
    if (orphans.length === 0) return
    for (const n of orphans) await rm(join(this.dir, 'snaps', n), { recursive: true, force: true })
    await this.#collectBlobs()
  }

  /** Delete blobs no snap (before, after, displaced) and no pending pre-image refers to. */
  async #collectBlobs(): Promise<void> {
    const st = this.#state ?? freshState()
    const live = new Set<string>()
    const keep = (m: ReadonlyMap<string, Entry> | undefined): void => {
      for (const e of m?.values() ?? []) if (e.kind === 'blob') live.add(e.sha)
    }
    for (const n of st.snaps) {
      const s = await this.#snap(n)
      if (s.damaged) return // cannot tell what it refers to: keep every blob
      keep(s.before)
      keep(s.after)
      keep(s.displaced?.files)
    }
    keep(this.#pending)
    let names: string[]
    try {
      names = await readdir(this.#blobs.dir)
    } catch (err) {
      if (errCode(err) === 'ENOENT') return
      throw err
    }
    for (const n of names) if (!live.has(n)) await rm(join(this.#blobs.dir, n), { force: true })
  }
}
