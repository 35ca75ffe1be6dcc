/**
 * A thread that creates the event files of a group, and a new session's directory with its first
 * files and owner marker. On the event loop each file costs three libuv submissions (open, write,
 * close), and on a small machine each submission wakes a pool thread at a cost of tens of
 * microseconds of the main thread's CPU; the worker does a whole group (or session) with
 * synchronous calls of its own, for one message each way
 * (docs/decisions/0485-event-files-written-by-a-thread.md, 0500-new-sessions-made-by-the-thread.md).
 *
 * The worker's code is {@link SOURCE}, plain CommonJS text run with `eval`, so it works the same
 * from the sources, a TypeScript loader and the bundle. The thread starts after a few writes (a
 * short run never pays for it), takes no synced write, and never keeps the process alive when no
 * write is waiting; one that ends before it answers is answered from the progress it recorded.
 */
import { lstat, unlink } from 'node:fs/promises'
import type { Worker } from 'node:worker_threads'

type WorkerThreads = typeof import('node:worker_threads')

/**
 * One group: files created in order, each exclusively (`wx`), the first failure stopping the rest;
 * a file with `renameTo` is then renamed over that path (an atomic replacement).
 */
interface GroupRequest {
  id: number
  files: ThreadFile[]
  /**
   * An open append descriptor of the session's segment (`events.jsonl`): the texts of the files
   * written are appended to it, in one write, after the last of them (none when none was written).
   */
  appendTo?: number
  /** One cell per file, set by the thread as it goes: see {@link Progress}. */
  progress: Int32Array
  /** Tests: the thread waits at this point until it is stopped (`pauseNext`). */
  pause?: Pause
}

/**
 * How far the thread got with a file, so that after the thread has ended the cells say what is
 * on disk without reading it. `Created`, `Closed`, `Renamed` and `Undone` (created and removed
 * again after a failure) are recorded after their step; `Opening` and `Renaming` before theirs
 * (and undone when it fails), since the thread may end between a call and its record.
 */
export const Progress = { None: 0, Created: 1, Closed: 2, Renamed: 3, Undone: 4, Opening: 5, Renaming: 6 } as const
type Progress = (typeof Progress)[keyof typeof Progress]

/** Tests: where the thread waits (after `file` reached `step`), and the cell it sets to 1 there. */
export interface Pause {
  file: number
  step: typeof Progress.Created | typeof Progress.Closed
  gate: Int32Array
  /**
   * Only a request whose first file (a new session: its directory) is under this directory takes
   * the pause; others pass it by (a write another test left running, say).
   */
  under: string
}

/** Whether `request` is the one `pause` waits for. */
function takesPause(pause: Pause, request: Omit<GroupRequest, 'id'> | Omit<SessionRequest, 'id'>): boolean {
  const first = 'session' in request ? request.session.dir : request.files[0]?.path
  return first !== undefined && first.startsWith(`${pause.under}/`)
}

/** A file for the thread to create (and, with `renameTo`, to rename once written). */
export interface ThreadFile {
  path: string
  text: string
  renameTo?: string
}

/** Why a step on the thread failed. */
interface Failure {
  code?: string
  message: string
}

/**
 * Per file attempted, in order: null once written and closed, else why not (the rest were not
 * tried); `appended` (with `appendTo`, when a file was written): null once the segment lines are
 * written, else why not.
 */
interface GroupReply {
  id: number
  failures: (Failure | null)[]
  appended?: Failure | null
}

/** What {@link EventFileThread.write} answers: per file as {@link GroupReply}, as errors. */
export interface ThreadWritten {
  failures: (Error | null)[]
  /** The segment lines (with `appendTo`): null once written, the error met, undefined when not tried. */
  appended?: Error | null
}

/**
 * A new session in one request: its directory made (it must not exist), its files created in it
 * in order (as a group's), then its owner marker taken as a free lock is (lock-file.ts
 * `freshLock`): the record written to `tmp`, linked to `path`, `tmp` removed.
 */
export interface ThreadSession {
  dir: string
  files: ThreadFile[]
  marker: { path: string; tmp: string; text: string }
}

interface SessionRequest {
  id: number
  session: ThreadSession
  progress: Int32Array
  pause?: Pause
}

/**
 * `made`: null once the directory and every file are made, else why not (a file that failed is
 * removed again; the directory and the files before it stay). `marker` (when made): taken, false
 * when the path exists (another holder), or why not.
 */
interface SessionReply {
  id: number
  made: Failure | null
  marker?: boolean | Failure
}

/**
 * What {@link EventFileThread.makeSession} answers; `dirMade`: this request made the directory
 * (a session not made is then the caller's to remove again: nobody else knows its id).
 */
export interface SessionMade {
  made: Error | null
  marker?: boolean | Error
  dirMade: boolean
}

/**
 * What the worker thread runs, as source text (CommonJS, `eval`): a function's own text would
 * carry what a bundler or a TypeScript loader adds to it (`__name(...)` helpers), which the
 * thread does not have. Per request ({@link GroupRequest}) it answers a {@link GroupReply}.
 */
const SOURCE = `
const { parentPort } = require('node:worker_threads')
const fs = require('node:fs')
const CREATED = ${Progress.Created}, CLOSED = ${Progress.Closed}, RENAMED = ${Progress.Renamed}, UNDONE = ${Progress.Undone}, OPENING = ${Progress.Opening}, RENAMING = ${Progress.Renaming}
function why(e) {
  const code = e !== null && typeof e === 'object' && typeof e.code === 'string' ? e.code : undefined
  return { code, message: e instanceof Error ? e.message : String(e) }
}
function step(req, i, state) {
  Atomics.store(req.progress, i, state)
  const p = req.pause
  if (p && p.file === i && p.step === state) {
    Atomics.store(p.gate, 0, 1)
    Atomics.wait(p.gate, 0, 1)
  }
}
// All of text at position from (null: the end of a file opened for appending).
function writeAll(fd, text, from, name) {
  const bytes = Buffer.from(text, 'utf8')
  for (let at = 0; at < bytes.length; ) {
    const n = fs.writeSync(fd, bytes, at, bytes.length - at, from === null ? null : from + at)
    if (n === 0) throw new Error('short write to ' + name)
    at += n
  }
}
function undo(req, i, path) {
  try {
    fs.unlinkSync(path)
    Atomics.store(req.progress, i, UNDONE)
  } catch {}
}
function create(req, i, path, text) {
  Atomics.store(req.progress, i, OPENING)
  let fd
  try {
    fd = fs.openSync(path, 'wx')
  } catch (e) {
    Atomics.store(req.progress, i, 0)
    throw e
  }
  step(req, i, CREATED)
  try {
    writeAll(fd, text, 0, path)
  } catch (e) {
    try { fs.closeSync(fd) } catch {}
    undo(req, i, path)
    throw e
  }
  try {
    fs.closeSync(fd)
  } catch (e) {
    undo(req, i, path)
    throw e
  }
  step(req, i, CLOSED)
}
function makeSession(req) {
  const s = req.session
  try {
    fs.mkdirSync(s.dir)
    Atomics.store(req.progress, s.files.length, CREATED)
    for (let i = 0; i < s.files.length; i++) create(req, i, s.files[i].path, s.files[i].text)
  } catch (e) {
    return { id: req.id, made: why(e) }
  }
  let marker
  try {
    fs.writeFileSync(s.marker.tmp, s.marker.text, { mode: 0o600, flag: 'wx' })
    try {
      fs.linkSync(s.marker.tmp, s.marker.path)
      marker = true
      step(req, s.files.length, CLOSED)
    } catch (e) {
      marker = e !== null && typeof e === 'object' && e.code === 'EEXIST' ? false : why(e)
    }
  } catch (e) {
    marker = why(e)
  }
  try { fs.unlinkSync(s.marker.tmp) } catch {}
  return { id: req.id, made: null, marker }
}
parentPort.on('message', (req) => {
  if (req.session !== undefined) return parentPort.postMessage(makeSession(req))
  const failures = []
  for (let i = 0; i < req.files.length; i++) {
    const f = req.files[i]
    try {
      create(req, i, f.path, f.text)
      if (f.renameTo !== undefined) {
        Atomics.store(req.progress, i, RENAMING)
        try {
          fs.renameSync(f.path, f.renameTo)
        } catch (e) {
          Atomics.store(req.progress, i, CLOSED)
          undo(req, i, f.path)
          throw e
        }
        step(req, i, RENAMED)
      }
      failures.push(null)
    } catch (e) {
      failures.push(why(e))
      break
    }
  }
  const written = failures.length > 0 && failures[failures.length - 1] !== null ? failures.length - 1 : failures.length
  if (req.appendTo === undefined || written === 0) return parentPort.postMessage({ id: req.id, failures })
  let appended = null
  try {
    let text = ''
    for (let i = 0; i < written; i++) text += req.files[i].text
    writeAll(req.appendTo, text, null, 'the segment')
  } catch (e) {
    appended = why(e)
  }
  parentPort.postMessage({ id: req.id, failures, appended })
})
`

/** A request that never reached the thread: nothing of it was written or made. */
export class NotSentError extends Error {
  override name = 'NotSentError'
}

/** Writes made on the event loop before the thread is started. */
const START_AFTER = 8

/** A file the worker did not create, as the error the event loop's calls would have thrown. */
function asError(f: Failure): Error {
  const err = new Error(f.message) as NodeJS.ErrnoException
  if (f.code !== undefined) err.code = f.code
  return err
}

/**
 * What the thread did of `files` before it ended without answering, from the progress it
 * recorded (the thread has exited: nothing changes any more). A file is written once closed (a
 * replacement once renamed); the first that is not ends the answer, and what the thread left of
 * it (a torn file, a temporary file not renamed) is removed: only a file it recorded creating
 * (or, ended during the open, an empty one), so never one another process wrote. Answers as the
 * thread would have.
 */
async function fromProgress(files: readonly ThreadFile[], progress: Int32Array): Promise<(Error | null)[]> {
  const out: (Error | null)[] = []
  for (const [i, f] of files.entries()) {
    const state = Atomics.load(progress, i) as Progress
    if (state === (f.renameTo === undefined ? Progress.Closed : Progress.Renamed)) {
      out.push(null)
      continue
    }
    let left: unknown
    // Opening: it ended between the open and its record: the file is ours only if it is still
    // empty (another writer's file at that name would have made the open fail, and holds text).
    const ours =
      state === Progress.Created ||
      state === Progress.Closed ||
      state === Progress.Renaming ||
      (state === Progress.Opening &&
        (await lstat(f.path).then(
          (st) => st.isFile() && st.size === 0,
          () => false,
        )))
    let gone = false
    if (ours)
      await unlink(f.path).catch((err: unknown) => {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') gone = true
        else left = err
      })
    // Renaming and the temporary name (private to this process) gone: the rename happened.
    if (state === Progress.Renaming && gone) {
      out.push(null)
      continue
    }
    const err = new Error(
      `not written: the event-file thread ended before it finished ${f.renameTo ?? f.path}` +
        (left === undefined ? '' : ` (and what it left could not be removed: ${String(left)})`),
    ) as NodeJS.ErrnoException
    err.code = 'EIO'
    out.push(err)
    break
  }
  return out
}

/** Ends of the thread not asked for (`stop`) after which no new one is started. */
const MAX_UNASKED_ENDS = 3

interface Waiting {
  /** The thread's reply. */
  answer(reply: GroupReply | SessionReply): void
  /** The thread ended without answering. */
  ended(): void
}

/** The process's event-file thread, shared by its stores. */
class EventFileThread {
  /** Writes made on the event loop before the thread starts (tests set Infinity to keep it off). */
  startAfter = START_AFTER
  /** Writes the thread has answered. */
  answered = 0
  /** Tests: the next write's request under `pauseNext.under` makes the thread wait at this point. */
  pauseNext: Pause | undefined
  #worker: Worker | undefined
  #ready = false
  #groups = 0
  #next = 0
  /** No thread any more: it could not be made, or ended by itself too often. */
  #given = false
  #unaskedEnds = 0
  #stopping = false
  readonly #waiting = new Map<number, Waiting>()

  /**
   * Whether a write can go to the thread now. Counts the writes asked about and starts the thread
   * after `startAfter`; false until it is running (the caller writes on the event loop), and for
   * good once a thread could not be made.
   */
  ready(): boolean {
    if (this.#ready) return true
    if (this.#worker === undefined && !this.#given && ++this.#groups > this.startAfter) this.#start()
    return false
  }

  /** Whether writes go to the thread now (unlike {@link ready}, this counts nothing and starts nothing). */
  running(): boolean {
    return this.#ready
  }

  /**
   * Create `files` in order on the thread. Per file attempted: null, or the error it met; a
   * shorter list than `files` means the rest were not tried. With `appendTo` (an open append
   * descriptor, which the caller keeps open until this settles) the texts of the files written
   * are then appended to it in one write. Should the thread end before it answers, the answer
   * comes from the progress it recorded (`fromProgress`), and the append counts as failed (it may
   * have been cut short). Rejects only when the request was not sent or never begun (a
   * {@link NotSentError}: nothing was written).
   */
  write(files: ThreadFile[], appendTo?: number): Promise<ThreadWritten> {
    const progress = new Int32Array(new SharedArrayBuffer(4 * files.length))
    return new Promise((resolve, reject) => {
      this.#send({ files, progress, ...(appendTo !== undefined ? { appendTo } : {}) }, reject, {
        answer: (reply) => {
          const r = reply as GroupReply
          const failures = r.failures.map((f) => (f === null ? null : asError(f)))
          resolve(r.appended === undefined ? { failures } : { failures, appended: r.appended && asError(r.appended) })
        },
        ended: () => {
          // Never begun (still queued when the thread ended, or its first open failed and was
          // undone): nothing of it was written, and the caller may write it another way.
          if (Atomics.load(progress, 0) === Progress.None)
            return reject(new NotSentError('the event-file thread ended before it began the request'))
          void fromProgress(files, progress).then((failures) => {
            const tried = appendTo !== undefined && failures[0] === null
            const appended = new Error('not appended: the event-file thread ended before it answered')
            resolve(tried ? { failures, appended } : { failures })
          }, reject)
        },
      })
    })
  }

  /**
   * Make a new session on the thread ({@link ThreadSession}): one message each way where the
   * event loop makes about ten calls. Should the thread end before it answers, the session is
   * not made (an `EIO` error; `dirMade` says whether what it left is the caller's to remove).
   * Rejects only when the request could not be sent (nothing was made).
   */
  makeSession(session: ThreadSession): Promise<SessionMade> {
    // A cell per file, then the directory's: Created once it is made, Closed once the marker is taken.
    const progress = new Int32Array(new SharedArrayBuffer(4 * (session.files.length + 1)))
    const dirMade = (): boolean => Atomics.load(progress, session.files.length) !== Progress.None
    return new Promise((resolve, reject) => {
      this.#send({ session, progress }, reject, {
        answer: (reply) => {
          const r = reply as SessionReply
          const marker = r.marker === undefined || typeof r.marker === 'boolean' ? r.marker : asError(r.marker)
          resolve({
            made: r.made === null ? null : asError(r.made),
            ...(marker !== undefined ? { marker } : {}),
            dirMade: dirMade(),
          })
        },
        ended: () => {
          const err = new Error(
            `not made: the event-file thread ended before it made session ${session.dir}`,
          ) as NodeJS.ErrnoException
          err.code = 'EIO'
          resolve({ made: err, dirMade: dirMade() })
        },
      })
    })
  }

  /** Send a request (its id and the next pause added); `reject` (a {@link NotSentError}) when it cannot be sent. */
  #send(
    request: Omit<GroupRequest, 'id'> | Omit<SessionRequest, 'id'>,
    reject: (err: unknown) => void,
    waiting: Waiting,
  ): void {
    const worker = this.#worker
    if (!worker || !this.#ready) return reject(new NotSentError('the event-file thread is not running'))
    const id = ++this.#next
    const pause = this.pauseNext && takesPause(this.pauseNext, request) ? this.pauseNext : undefined
    if (pause) this.pauseNext = undefined
    this.#waiting.set(id, waiting)
    worker.ref()
    try {
      worker.postMessage({ id, ...request, ...(pause ? { pause } : {}) })
    } catch (err) {
      this.#waiting.delete(id)
      if (this.#waiting.size === 0) worker.unref()
      reject(new NotSentError(`not sent to the event-file thread: ${String(err)}`, { cause: err }))
    }
  }

  /** Start the thread now if it is not running; resolves once it runs (writes then go to it). */
  started(): Promise<void> {
    if (this.#ready) return Promise.resolve()
    if (this.#given) return Promise.reject(new Error('the event-file thread could not be started'))
    const worker = this.#worker ?? this.#start()
    if (!worker) return Promise.reject(new Error('the event-file thread could not be started'))
    // Held while it starts: the caller waits for it.
    worker.ref()
    return new Promise<void>((resolve, reject) => {
      const online = (): void => {
        worker.off('exit', ended)
        resolve()
      }
      const ended = (): void => {
        worker.off('online', online)
        reject(new Error('the event-file thread ended before it ran'))
      }
      worker.once('online', online)
      worker.once('exit', ended)
    }).finally(() => {
      if (this.#waiting.size === 0) worker.unref()
    })
  }

  #start(): Worker | undefined {
    let worker: Worker
    try {
      const { Worker } = process.getBuiltinModule('node:worker_threads') as WorkerThreads
      // stdout: true keeps the thread's stdout off this process's (the wire on stdio transports).
      worker = new Worker(SOURCE, { eval: true, name: 'chimera event files', stdout: true, stderr: false })
    } catch (err) {
      // No thread (a process or thread limit): writes stay on the event loop.
      this.#given = true
      process.emitWarning(`event files are written on the event loop: no thread (${String(err)})`)
      return undefined
    }
    this.#worker = worker
    worker.once('online', () => {
      if (this.#worker === worker) this.#ready = true
    })
    worker.on('message', (reply: GroupReply | SessionReply) => {
      const w = this.#waiting.get(reply.id)
      if (!w) return
      this.#waiting.delete(reply.id)
      this.answered++
      if (this.#waiting.size === 0) worker.unref()
      w.answer(reply)
    })
    // An uncaught error ends the thread ('exit' follows): nothing new is sent to it.
    worker.on('error', () => {
      if (this.#worker === worker) this.#ready = false
    })
    worker.on('exit', () => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#ready = false
      this.#groups = 0
      if (!this.#stopping && ++this.#unaskedEnds >= MAX_UNASKED_ENDS) this.#given = true
      this.#stopping = false
      // The thread is gone: what it did of each waiting request, it recorded.
      for (const w of this.#waiting.values()) w.ended()
      this.#waiting.clear()
    })
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref()
    return worker
  }

  /** Stop the thread (tests); writes then go to the event loop until it starts again. */
  async stop(): Promise<void> {
    const w = this.#worker
    if (!w) return
    this.#stopping = true
    await w.terminate()
  }
}

/** The one thread of this process. */
export const eventFileThread = new EventFileThread()
