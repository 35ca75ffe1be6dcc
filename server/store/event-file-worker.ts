/**
 * A thread that creates the event files of a group. On the event loop each file costs three
 * libuv submissions (open, write, close), and on a small machine each submission wakes a pool
 * thread at a cost of tens of microseconds of the main thread's CPU; the worker creates a whole
 * group with synchronous calls of its own, for one message each way
 * (docs/decisions/0485-event-files-written-by-a-thread.md).
 *
 * The worker's code is {@link SOURCE}, plain CommonJS text run with `eval`, so it works the same
 * from the sources, a TypeScript loader and the bundle. The thread starts after a few groups (a short run never pays for it), serves only while it answers,
 * and never keeps the process alive when no write is waiting.
 */
import type { Worker } from 'node:worker_threads'

type WorkerThreads = typeof import('node:worker_threads')

/**
 * One group: files created in order, each exclusively (`wx`), the first failure stopping the rest;
 * a file with `renameTo` is then renamed over that path (an atomic replacement).
 */
interface GroupRequest {
  id: number
  files: ThreadFile[]
  fsync: boolean
}

/** A file for the thread to create (and, with `renameTo`, to rename once written). */
export interface ThreadFile {
  path: string
  text: string
  renameTo?: string
}

/** Per file attempted, in order: null once written and closed, else why not (the rest were not tried). */
interface GroupReply {
  id: number
  failures: ({ code?: string; message: string } | null)[]
}

/**
 * What the worker thread runs, as source text (CommonJS, `eval`): a function's own text would
 * carry what a bundler or a TypeScript loader adds to it (`__name(...)` helpers), which the
 * thread does not have. Per request ({@link GroupRequest}) it answers a {@link GroupReply}.
 */
const SOURCE = `
const { parentPort } = require('node:worker_threads')
const fs = require('node:fs')
function why(e) {
  const code = e !== null && typeof e === 'object' && typeof e.code === 'string' ? e.code : undefined
  return { code, message: e instanceof Error ? e.message : String(e) }
}
function create(path, text, fsync) {
  const fd = fs.openSync(path, 'wx')
  try {
    const bytes = Buffer.from(text, 'utf8')
    for (let at = 0; at < bytes.length; ) {
      const n = fs.writeSync(fd, bytes, at, bytes.length - at, at)
      if (n === 0) throw new Error('short write to ' + path)
      at += n
    }
    if (fsync) fs.fsyncSync(fd)
  } catch (e) {
    try { fs.closeSync(fd) } catch {}
    removeQuietly(path)
    throw e
  }
  try {
    fs.closeSync(fd)
  } catch (e) {
    removeQuietly(path)
    throw e
  }
}
function removeQuietly(path) {
  try { fs.unlinkSync(path) } catch {}
}
parentPort.on('message', (req) => {
  const failures = []
  for (const f of req.files) {
    try {
      create(f.path, f.text, req.fsync)
      if (f.renameTo !== undefined) {
        try {
          fs.renameSync(f.path, f.renameTo)
        } catch (e) {
          removeQuietly(f.path)
          throw e
        }
      }
      failures.push(null)
    } catch (e) {
      failures.push(why(e))
      break
    }
  }
  parentPort.postMessage({ id: req.id, failures })
})
`

/** Writes made on the event loop before the thread is started. */
const START_AFTER = 8

/** A file the worker did not create, as the error the event loop's calls would have thrown. */
function asError(f: { code?: string; message: string }): Error {
  const err = new Error(f.message) as NodeJS.ErrnoException
  if (f.code !== undefined) err.code = f.code
  return err
}

/** The process's event-file thread, shared by its stores. */
class EventFileThread {
  /** Writes made on the event loop before the thread starts (tests set Infinity to keep it off). */
  startAfter = START_AFTER
  /** Writes the thread has answered. */
  answered = 0
  #worker: Worker | undefined
  #ready = false
  #groups = 0
  #next = 0
  readonly #waiting = new Map<number, { resolve: (r: (Error | null)[]) => void; reject: (e: Error) => void }>()

  /**
   * Whether a write can go to the thread now. Counts the writes asked about and starts the thread
   * after `startAfter`; false until it is running (the caller writes on the event loop).
   */
  ready(): boolean {
    if (this.#ready) return true
    if (this.#worker === undefined && ++this.#groups > this.startAfter) this.#start()
    return false
  }

  /**
   * Create `files` in order on the thread. Per file attempted: null, or the error it met; a
   * shorter list than `files` means the rest were not tried. Rejects if the thread stopped
   * before answering: then which files exist is not known.
   */
  write(files: ThreadFile[], fsync: boolean): Promise<(Error | null)[]> {
    const worker = this.#worker
    if (!worker || !this.#ready) return Promise.reject(new Error('the event-file thread is not running'))
    const id = ++this.#next
    return new Promise((resolve, reject) => {
      if (this.#waiting.size === 0) worker.ref()
      this.#waiting.set(id, { resolve, reject })
      worker.postMessage({ id, files, fsync } satisfies GroupRequest)
    })
  }

  /** Start the thread now if it is not running; resolves once it runs (writes then go to it). */
  started(): Promise<void> {
    if (this.#ready) return Promise.resolve()
    const worker = this.#worker ?? this.#start()
    // Held while it starts: the caller waits for it.
    worker.ref()
    return new Promise<void>((resolve, reject) => {
      worker.once('online', () => resolve())
      worker.once('error', reject)
    }).finally(() => {
      if (this.#waiting.size === 0) worker.unref()
    })
  }

  #start(): Worker {
    const { Worker } = process.getBuiltinModule('node:worker_threads') as WorkerThreads
    const worker = new Worker(SOURCE, { eval: true, name: 'chimera event files', stdout: false, stderr: false })
    this.#worker = worker
    worker.once('online', () => {
      if (this.#worker === worker) this.#ready = true
    })
    worker.on('message', (reply: GroupReply) => {
      const w = this.#waiting.get(reply.id)
      if (!w) return
      this.#waiting.delete(reply.id)
      this.answered++
      if (this.#waiting.size === 0) worker.unref()
      w.resolve(reply.failures.map((f) => (f === null ? null : asError(f))))
    })
    const stopped = (why: string): void => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      this.#ready = false
      this.#groups = 0
      const err = new Error(
        `the event-file thread stopped (${why}): whether the group's files were written is not known`,
      )
      for (const w of this.#waiting.values()) w.reject(err)
      this.#waiting.clear()
    }
    worker.on('error', (e) => stopped(e.message))
    worker.on('exit', (code) => stopped(`exit code ${code}`))
    // After the listeners: adding a 'message' listener refs the worker's port again.
    worker.unref()
    return worker
  }

  /** Stop the thread (tests); writes then go to the event loop until it starts again. */
  async stop(): Promise<void> {
    const w = this.#worker
    if (w) await w.terminate()
  }
}

/** The one thread of this process. */
export const eventFileThread = new EventFileThread()
