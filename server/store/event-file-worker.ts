/**
 * A thread that creates the event files of a group. On the event loop each file costs three
 * libuv submissions (open, write, close), and on a small machine each submission wakes a pool
 * thread at a cost of tens of microseconds of the main thread's CPU; the worker creates a whole
 * group with synchronous calls of its own, for one message each way
 * (docs/decisions/0485-event-files-written-by-a-thread.md).
 *
 * The worker's code is {@link SOURCE}, plain CommonJS text run with `eval`, so it works the same
 * from the sources, a TypeScript loader and the bundle. The thread starts after a few writes (a
 * short run never pays for it), takes no synced write, and never keeps the process alive when no
 * write is waiting; one that ends before it answers is answered from the disk.
 */
import { readFile, unlink } from 'node:fs/promises'
import type { Worker } from 'node:worker_threads'

type WorkerThreads = typeof import('node:worker_threads')

/**
 * One group: files created in order, each exclusively (`wx`), the first failure stopping the rest;
 * a file with `renameTo` is then renamed over that path (an atomic replacement).
 */
interface GroupRequest {
  id: number
  files: ThreadFile[]
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
function create(path, text) {
  const fd = fs.openSync(path, 'wx')
  try {
    const bytes = Buffer.from(text, 'utf8')
    for (let at = 0; at < bytes.length; ) {
      const n = fs.writeSync(fd, bytes, at, bytes.length - at, at)
      if (n === 0) throw new Error('short write to ' + path)
      at += n
    }
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
      create(f.path, f.text)
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

/**
 * What of `files` is on disk after the thread ended during their request, as the thread would
 * have answered: a file is written when it holds its whole text (a replacement: when its
 * temporary file is gone and the target holds the text). The first that is not ends the list;
 * a torn file of ours (a prefix of its text) and a temporary file left behind are removed.
 */
async function onDisk(files: readonly ThreadFile[]): Promise<(Error | null)[]> {
  const out: (Error | null)[] = []
  for (const f of files) {
    const why = await notFinished(f)
    out.push(why ?? null)
    if (why) break
  }
  return out
}

async function notFinished(f: ThreadFile): Promise<Error | undefined> {
  const lost = (code: string, what: string): Error =>
    Object.assign(new Error(`${what}: ${f.renameTo ?? f.path}`), { code })
  if (f.renameTo !== undefined) {
    if (await removed(f.path)) return lost('EIO', 'not replaced: the event-file thread ended before it was renamed')
    const now = await text(f.renameTo)
    return now === f.text ? undefined : lost('EIO', 'not replaced: the event-file thread ended before it was written')
  }
  const now = await text(f.path)
  if (now === f.text) return undefined
  if (now === undefined) return lost('EIO', 'not written: the event-file thread ended before it was created')
  // Ours, cut short (the thread creates exclusively, so a prefix of our text is our own write).
  if (f.text.startsWith(now)) {
    await removed(f.path)
    return lost('EIO', 'not written: the event-file thread ended while it was written')
  }
  return lost('EEXIST', 'not written: another file holds its name')
}

/** A file's text, or undefined when it does not exist. */
async function text(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** Remove `path`; false when it was not there. */
async function removed(path: string): Promise<boolean> {
  try {
    await unlink(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

/** Ends of the thread not asked for (`stop`) after which no new one is started. */
const MAX_UNASKED_ENDS = 3

interface Waiting {
  files: ThreadFile[]
  resolve: (r: (Error | null)[]) => void
  reject: (e: unknown) => void
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

  /**
   * Create `files` in order on the thread. Per file attempted: null, or the error it met; a
   * shorter list than `files` means the rest were not tried. Should the thread end before it
   * answers, the answer is read from the disk (`onDisk`); rejects only if that fails too.
   */
  write(files: ThreadFile[]): Promise<(Error | null)[]> {
    const worker = this.#worker
    if (!worker || !this.#ready) return Promise.reject(new Error('the event-file thread is not running'))
    const id = ++this.#next
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { files, resolve, reject })
      worker.ref()
      try {
        worker.postMessage({ id, files } satisfies GroupRequest)
      } catch (err) {
        this.#waiting.delete(id)
        if (this.#waiting.size === 0) worker.unref()
        reject(err)
      }
    })
  }

  /** Start the thread now if it is not running; resolves once it runs (writes then go to it). */
  started(): Promise<void> {
    if (this.#ready) return Promise.resolve()
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
    worker.on('message', (reply: GroupReply) => {
      const w = this.#waiting.get(reply.id)
      if (!w) return
      this.#waiting.delete(reply.id)
      this.answered++
      if (this.#waiting.size === 0) worker.unref()
      w.resolve(reply.failures.map((f) => (f === null ? null : asError(f))))
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
      // The thread is gone: what it did of each waiting request is on disk, or not.
      for (const w of this.#waiting.values()) onDisk(w.files).then(w.resolve, w.reject)
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
