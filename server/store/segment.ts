/**
 * The derived event segment of a session directory (docs/decisions/0130-event-segment.md):
 * `events.jsonl` holds every event record of the session, line k being the exact bytes of
 * `event-<k>-<type>.json`, so a long replay reads one file instead of one file per event.
 *
 * The event files stay the source of truth. The segment is appended after the event file is
 * written, in the store's serialised write path, and is trusted only for the prefix whose
 * lines are complete JSON records agreeing with the directory's event files (same counter,
 * same type, same session); anything after that prefix is cut and rebuilt from the event files
 * when a session is opened. Losing or damaging it costs speed, never an event.
 */
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { AnyEvent } from '../events/event-types.ts'
import { errCode, readJsonFile, writeJsonAtomic, type LogEntry } from './file-log.ts'
import { BufferPool } from './buffer-pool.ts'
import { zlib } from '../platform/builtins.ts'
import { storedRecords, type StoredRecord } from './stored-lines.ts'

export const SEGMENT_FILE = 'events.jsonl'
/**
 * The segment's checksum file (docs/decisions/0392-vouched-segment.md): `{"lines","bytes","crc32"}`
 * of the segment's first `bytes` bytes, written when a session leaves this instance's memory, so
 * a replay of a session nobody holds open can send those lines without opening it.
 */
export const SUM_FILE = 'events.sum'

type Crc32 = (data: Uint8Array | string, value?: number) => number
let zlibCrc32: Crc32 | undefined | null = null
/** zlib's CRC-32 (Node 20.15 and 22.2 on), `node:zlib` loaded on the first call; undefined on older runtimes. */
function crc32Fn(): Crc32 | undefined {
  if (zlibCrc32 === null) zlibCrc32 = (zlib() as { crc32?: Crc32 }).crc32
  return zlibCrc32
}
/** CRC-32 of `data` continuing `crc`; undefined on runtimes without zlib's. */
export function crc32(data: Uint8Array | string, crc = 0): number | undefined {
  return crc32Fn()?.(data, crc)
}

/** The part of a segment that agrees with the event files. */
export interface SegmentPrefix {
  /** Events 1..n, from the segment. */
  events: AnyEvent[]
  /** `ends[k]`: the byte offset just after the line of seq k + 1. */
  ends: number[]
  /** The segment's size on disk; more than the last end means a tail to cut. */
  size: number
  /** Why verification stopped before the end of the file. */
  reason?: string
  /** CRC-32 of the bytes of those lines (undefined when not known). */
  crc?: number
}

const NL = 0x0a
const COMMA = 0x2c

/**
 * Parse the records in `buf` (each a line ending in a newline, `count` of them) with one
 * `JSON.parse` of them as an array: much cheaper than one parse per line. Undefined when that
 * fails (some line is not one JSON value); the caller then looks line by line. `buf` is changed.
 */
function parseLines(buf: Buffer, count: number): unknown[] | undefined {
  if (count === 0) return []
  for (let i = buf.indexOf(NL); i >= 0 && i < buf.length - 1; i = buf.indexOf(NL, i + 1)) buf[i] = COMMA
  try {
    const all = JSON.parse(`[${buf.toString('utf8', 0, buf.length - 1)}]`) as unknown
    return Array.isArray(all) && all.length === count ? all : undefined
  } catch {
    return undefined
  }
}

/** Why `value` is not the stored record of `entry` (envelope fields only), or undefined. */
function envelopeProblem(value: unknown, entry: LogEntry, sessionId: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an event object'
  const e = value as { seq?: unknown; type?: unknown; session_id?: unknown; data?: unknown }
  if (e.seq !== entry.seq) return `content seq ${String(e.seq)} does not match the file name's ${entry.seq}`
  if (e.type !== entry.type) return `content type ${String(e.type)} does not match the file name's ${entry.type}`
  if (e.session_id !== sessionId) return `content session_id ${JSON.stringify(e.session_id)} is not ${sessionId}`
  if (typeof e.data !== 'object' || e.data === null) return 'no data object'
  return undefined
}

/**
 * Read the segment of `dir` and keep its longest prefix that agrees with `entries` (the event
 * files sorted by counter): line k must be a complete JSON record whose counter, type and
 * session are those of `entries[k - 1]`. The full schema check is not repeated here: every line
 * was an event validated by `append` (or read back from a checked event file) when written.
 */
export async function readSegment(
  dir: string,
  sessionId: string,
  entries: readonly LogEntry[],
): Promise<SegmentPrefix> {
  let buf: Buffer
  try {
    buf = await readWhole(join(dir, SEGMENT_FILE))
  } catch (err) {
    if (errCode(err) === 'ENOENT') return { events: [], ends: [], size: 0 }
    return { events: [], ends: [], size: 0, reason: `unreadable: ${(err as Error).message}` }
  }
  const size = buf.length
  // Complete lines that have an event file of the same counter.
  const ends: number[] = []
  let reason: string | undefined
  for (let pos = 0; pos < size;) {
    const k = ends.length
    const entry = entries[k]
    if (!entry || entry.seq !== k + 1) {
      reason = `line ${k + 1} has no event file ${k + 1}`
      break
    }
    const nl = buf.indexOf(NL, pos)
    if (nl < 0) {
      reason = `line ${k + 1} is torn (no newline)`
      break
    }
    pos = nl + 1
    ends.push(pos)
  }
  const valid = ends.at(-1) ?? 0
  // Before `parseLines` changes the buffer: the checksum of the lines, if all of them hold.
  let crc = crc32(buf.subarray(0, valid))
  const parsed = parseLines(buf.subarray(0, valid), ends.length)
  const events: AnyEvent[] = []
  for (let k = 0; k < ends.length; k++) {
    let value: unknown
    if (parsed) value = parsed[k]
    else {
      const text = buf.toString('utf8', k === 0 ? 0 : ends[k - 1]!, ends[k]! - 1)
      try {
        value = JSON.parse(text)
      } catch {
        reason = `line ${k + 1} is not JSON`
        break
      }
    }
    const problem = envelopeProblem(value, entries[k]!, sessionId)
    if (problem !== undefined) {
      reason = `line ${k + 1} disagrees with ${entries[k]!.name}: ${problem}`
      break
    }
    events.push(value as AnyEvent)
  }
  if (events.length < ends.length) crc = undefined
  ends.length = events.length
  return { events, ends, size, reason, ...(crc === undefined ? {} : { crc }) }
}

/** A file's bytes in one read of its size (`readFile` reads big files in many small pieces). */
async function readWhole(path: string): Promise<Buffer> {
  const fh = await open(path, 'r')
  try {
    const { size } = await fh.stat()
    const buf = Buffer.allocUnsafe(size)
    let got = 0
    while (got < size) {
      const { bytesRead } = await fh.read(buf, got, size - got, got)
      if (bytesRead === 0) break
      got += bytesRead
    }
    return got === size ? buf : buf.subarray(0, got)
  } finally {
    await fh.close()
  }
}

/** A page of a segment read at once: at most this many bytes (at least one line). */
export const SEGMENT_PAGE_BYTES = 4 * 1024 * 1024
/**
 * The buffers pages are read into (docs/decisions/0435-replay-buffers-reused.md): a page goes back
 * once its records were sent or parsed, so a long replay reads every page into the same two.
 */
export const pagePool = new BufferPool(SEGMENT_PAGE_BYTES, 2)

/** `n` bytes to read a page into: a view of a pool buffer (`pooled`) when it fits one. */
function pageBuffer(n: number): { buf: Buffer; pooled?: Buffer } {
  if (n > pagePool.size) return { buf: Buffer.allocUnsafe(n) }
  const pooled = pagePool.take()
  return { buf: pooled.subarray(0, n), pooled }
}

/**
 * The bytes of lines `from..to` (counters) of a verified segment, given the line ends: one read,
 * into a pool buffer (`pooled`, to be given back) when it fits one. Undefined when they are not
 * those lines (a line end is not a newline: the file changed underneath).
 */
async function readSegmentBytes(
  dir: string,
  ends: readonly number[],
  from: number,
  to: number,
): Promise<{ buf: Buffer; pooled?: Buffer } | undefined> {
  const start = from <= 1 ? 0 : ends[from - 2]!
  const end = ends[to - 1]!
  const page = pageBuffer(end - start)
  const { buf } = page
  let ok = false
  try {
    const fh = await open(join(dir, SEGMENT_FILE), 'r')
    try {
      const { bytesRead } = await fh.read(buf, 0, buf.length, start)
      if (bytesRead !== buf.length) return undefined
    } finally {
      await fh.close()
    }
    for (let seq = from; seq <= to; seq++) if (buf[ends[seq - 1]! - start - 1] !== NL) return undefined
    ok = true
    return page
  } finally {
    if (!ok && page.pooled) pagePool.give(page.pooled)
  }
}

/** Events `from..to` of a verified segment (parsed); undefined as `readSegmentBytes`. */
export async function readSegmentLines(
  dir: string,
  ends: readonly number[],
  from: number,
  to: number,
): Promise<AnyEvent[] | undefined> {
  const page = await readSegmentBytes(dir, ends, from, to)
  if (!page) return undefined
  let parsed: unknown[] | undefined
  try {
    parsed = parseLines(page.buf, to - from + 1)
  } finally {
    // The parsed events hold strings, not views of the page.
    if (page.pooled) pagePool.give(page.pooled)
  }
  if (!parsed) return undefined
  for (let k = 0; k < parsed.length; k++) if ((parsed[k] as AnyEvent | null)?.seq !== from + k) return undefined
  return parsed as AnyEvent[]
}

/** Stored records of one page and, for a page read into a pool buffer, how to give it back. */
export interface StoredPage {
  records: StoredRecord[]
  /**
   * Give the page's buffer back to the pool (once; later calls do nothing): only when no record
   * of the page is read any more, since `text` records are views of it.
   */
  release(): void
}

/** `release` of a page whose buffer is `pooled` (or nothing to give back). */
export function pageRelease(pooled: Buffer | undefined): () => void {
  if (!pooled) return () => {}
  let given = false
  return () => {
    if (given) return
    given = true
    pagePool.give(pooled)
  }
}

/**
 * Lines `from..to` of a verified segment as stored records (stored-lines.ts), without parsing
 * the lines the event writer wrote; undefined as `readSegmentBytes`, or when a line is not the
 * record of its counter in `sessionId`.
 */
export async function readSegmentRecords(
  dir: string,
  sessionId: string,
  ends: readonly number[],
  from: number,
  to: number,
): Promise<StoredPage | undefined> {
  const page = await readSegmentBytes(dir, ends, from, to)
  if (!page) return undefined
  const records = storedRecords(page.buf, from, to - from + 1, sessionId, {
    ends,
    base: from <= 1 ? 0 : ends[from - 2]!,
  })
  const release = pageRelease(page.pooled)
  if (!records) release()
  return records && { records, release }
}

/** Cut the segment to `keep` bytes and append `texts` (event records, each ending in a newline). */
export async function rewriteSegmentTail(dir: string, keep: number, texts: readonly string[]): Promise<number[]> {
  const fh = await open(join(dir, SEGMENT_FILE), 'a')
  const ends: number[] = []
  try {
    await fh.truncate(keep)
    let at = keep
    // Batched: one write per ~1 MiB instead of one per event.
    let batch: string[] = []
    let batchBytes = 0
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return
      await fh.write(batch.join(''))
      batch = []
      batchBytes = 0
    }
    for (const t of texts) {
      const n = Buffer.byteLength(t)
      at += n
      ends.push(at)
      batch.push(t)
      batchBytes += n
      if (batchBytes >= 1 << 20) await flush()
    }
    await flush()
  } finally {
    await fh.close()
  }
  return ends
}

/**
 * Open append handles of segments, at most `max` at once (the least recently used is closed
 * once its writes are done), so a process with many live sessions does not hold a descriptor
 * per session. Appends of one directory must not overlap (the store serialises them).
 */
export class SegmentWriters {
  readonly #handles = new Map<string, { fh: Promise<FileHandle>; last: Promise<unknown> }>()
  readonly #max: number

  constructor(max = 64) {
    this.#max = max
  }

  /** Append `text` to the segment of `dir`; resolves once written (not synced: the segment is derived). */
  append(dir: string, text: string): Promise<void> {
    return this.#use(dir, async (fh) => {
      const bytes = Buffer.from(text)
      const { bytesWritten } = await fh.write(bytes)
      if (bytesWritten !== bytes.length)
        throw new Error(`short write to ${SEGMENT_FILE}: ${bytesWritten} of ${bytes.length} bytes`)
    })
  }

  /**
   * Lend the append descriptor of `dir`'s segment (opened as `append` opens it) to a write made
   * elsewhere (the event-file thread, which appends a group's lines with its files): the handle is
   * not closed before `use` settles, and is not reused after it rejects or `failed` says its
   * append failed. Rejects without calling `use` when the segment cannot be opened.
   */
  lend<T>(dir: string, use: (fd: number) => Promise<T>, failed: (result: T) => boolean): Promise<T> {
    return this.#use(dir, (fh) => use(fh.fd), failed)
  }

  /**
   * Run `write` on the handle of `dir` (opened on first use, then the most recent of the kept
   * handles). A handle whose write rejected, or whose result `failed` refuses, is not reused: the
   * next append opens the file again.
   */
  #use<T>(dir: string, write: (fh: FileHandle) => Promise<T>, failed?: (result: T) => boolean): Promise<T> {
    let h = this.#handles.get(dir)
    if (h) this.#handles.delete(dir)
    else {
      h = { fh: open(join(dir, SEGMENT_FILE), 'a'), last: Promise.resolve() }
      h.fh.catch(() => {})
    }
    this.#handles.set(dir, h)
    const handle = h
    const run = handle.fh.then(write)
    handle.last = run.catch(() => {})
    run.then(
      (r) => failed?.(r) && this.#drop(dir, handle),
      () => this.#drop(dir, handle),
    )
    while (this.#handles.size > this.#max) {
      const [oldest, old] = this.#handles.entries().next().value as [string, typeof handle]
      this.#handles.delete(oldest)
      void closeAfter(old)
    }
    return run
  }

  /** Stop reusing `handle` of `dir`; it is closed after its pending write. */
  #drop(dir: string, handle: { fh: Promise<FileHandle>; last: Promise<unknown> }): void {
    if (this.#handles.get(dir) === handle) this.#handles.delete(dir)
    void closeAfter(handle)
  }

  /** Close the handle of `dir`, if open, after its pending write. */
  async close(dir: string): Promise<void> {
    const h = this.#handles.get(dir)
    if (!h) return
    this.#handles.delete(dir)
    await closeAfter(h)
  }

  /** Close every open handle, each after its pending write (an append afterwards opens its file again). */
  async closeAll(): Promise<void> {
    const all = [...this.#handles.values()]
    this.#handles.clear()
    await Promise.all(all.map(closeAfter))
  }
}

async function closeAfter(h: { fh: Promise<FileHandle>; last: Promise<unknown> }): Promise<void> {
  await h.last
  await h.fh.then((fh) => fh.close()).catch(() => {})
}

/** What the checksum file vouches for. */
export interface SegmentSum {
  lines: number
  bytes: number
  crc32: number
}

/** Write the checksum file of `dir` (replaced atomically; not synced: it is derived too). */
export async function writeSegmentSum(dir: string, sum: SegmentSum): Promise<void> {
  await writeJsonAtomic(join(dir, SUM_FILE), sum)
}

/**
 * Segments larger than this are not served vouched (they are opened): a vouched replay keeps the
 * offset of every line in memory.
 */
const VOUCHED_MAX_BYTES = 32 * 1024 * 1024

/** A run of whole lines of a vouched segment, at most a page long, and the CRC-32 of its bytes. */
interface VouchedBlock {
  start: number
  end: number
  /** The counter of its last line. */
  last: number
  crc: number
}

/** What a segment's checksum vouches for: where its lines end, in blocks each with its checksum. */
export interface VouchedSegment {
  /** `ends[k]`: the byte offset just after line k + 1. */
  ends: number[]
  blocks: VouchedBlock[]
  /** The segment holds bytes after the vouched ones. */
  more: boolean
}

/**
 * The lines the checksum file of `dir` vouches for: the segment's first `bytes` bytes, read a
 * page at a time into one pool buffer (docs/decisions/0435-replay-buffers-reused.md) and checked
 * against the checksum (a line changed on disk since, even to the same length, fails it), cut at
 * their newlines (exactly `lines` of them) and into blocks of whole lines, each with its own
 * CRC-32 so that `readVouchedPage` can check that what it reads again is what was checked here.
 * Undefined when there is no checksum file, the segment is shorter, a line is longer than a page,
 * or anything disagrees.
 */
export async function readVouchedSegment(dir: string): Promise<VouchedSegment | undefined> {
  const blockCrc32 = crc32Fn()
  if (!blockCrc32) return undefined
  const r = await readJsonFile(join(dir, SUM_FILE))
  if (r.kind !== 'ok') return undefined
  const sum = r.value as Partial<SegmentSum> | null
  if (
    typeof sum !== 'object' ||
    sum === null ||
    !Number.isSafeInteger(sum.lines) ||
    !Number.isSafeInteger(sum.bytes) ||
    !Number.isSafeInteger(sum.crc32) ||
    sum.lines! <= 0 ||
    sum.bytes! <= 0 ||
    sum.bytes! > VOUCHED_MAX_BYTES
  )
    return undefined
  const bytes = sum.bytes!
  const ends: number[] = []
  const blocks: VouchedBlock[] = []
  let crc = 0
  let size: number
  const scratch = pagePool.take()
  try {
    const fh = await open(join(dir, SEGMENT_FILE), 'r')
    try {
      size = (await fh.stat()).size
      if (size < bytes) return undefined
      for (let start = 0; start < bytes;) {
        const piece = scratch.subarray(0, Math.min(scratch.length, bytes - start))
        if (!(await readFully(fh, piece, start))) return undefined
        // The block ends after the piece's last newline (the rest is read again with the next).
        const end = piece.lastIndexOf(NL) + 1
        if (end === 0 || (start + piece.length === bytes && end !== piece.length)) return undefined
        const block = piece.subarray(0, end)
        for (let i = block.indexOf(NL); i >= 0; i = block.indexOf(NL, i + 1)) ends.push(start + i + 1)
        const blockCrc = blockCrc32(block)
        crc = crc32Combine(crc, blockCrc, end)
        blocks.push({ start, end: start + end, last: ends.length, crc: blockCrc })
        start += end
      }
    } finally {
      await fh.close()
    }
  } catch {
    return undefined
  } finally {
    pagePool.give(scratch)
  }
  if (crc !== sum.crc32 || ends.length !== sum.lines) return undefined
  return { ends, blocks, more: size > bytes }
}

/** Read `buf.length` bytes at `position`; false when the file ends before. */
async function readFully(fh: FileHandle, buf: Buffer, position: number): Promise<boolean> {
  for (let got = 0; got < buf.length;) {
    const { bytesRead } = await fh.read(buf, got, buf.length - got, position + got)
    if (bytesRead === 0) return false
    got += bytesRead
  }
  return true
}

/**
 * The stored records after `afterSeq` (within its block: `more` until the last) of a vouched
 * segment, read again into a pool buffer (`release` gives it back) and sent only if the block's
 * bytes are still those `readVouchedSegment` checked. Undefined when they are not (the file changed
 * since): the replay then loads the session from that cursor.
 */
export async function readVouchedPage(
  dir: string,
  seg: VouchedSegment,
  sessionId: string,
  afterSeq: number,
): Promise<(StoredPage & { more: boolean }) | undefined> {
  const { ends, blocks } = seg
  if (afterSeq < 0 || afterSeq >= ends.length) return undefined
  const at = afterSeq === 0 ? 0 : ends[afterSeq - 1]!
  let lo = 0
  let hi = blocks.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (blocks[mid]!.end <= at) lo = mid + 1
    else hi = mid
  }
  const block = blocks[lo]!
  const page = pageBuffer(block.end - block.start)
  const release = pageRelease(page.pooled)
  let records: StoredRecord[] | undefined
  try {
    const fh = await open(join(dir, SEGMENT_FILE), 'r')
    try {
      if (!(await readFully(fh, page.buf, block.start))) return undefined
    } finally {
      await fh.close()
    }
    if (crc32(page.buf) !== block.crc) return undefined
    records = storedRecords(page.buf.subarray(at - block.start), afterSeq + 1, block.last - afterSeq, sessionId, {
      ends,
      base: at,
    })
    return records && { records, release, more: block.last < ends.length }
  } finally {
    if (!records) release()
  }
}

/**
 * The CRC-32 of two byte runs one after the other, from the CRC-32 of each and the second's
 * length (zlib's `crc32_combine`): the checksum of a whole segment from those of its blocks.
 */
export function crc32Combine(crc1: number, crc2: number, len2: number): number {
  if (len2 <= 0) return crc1
  const times = (mat: number[], vec: number): number => {
    let sum = 0
    for (let i = 0; vec !== 0; i++, vec >>>= 1) if (vec & 1) sum ^= mat[i]!
    return sum >>> 0
  }
  const square = (out: number[], mat: number[]): void => {
    for (let n = 0; n < 32; n++) out[n] = times(mat, mat[n]!)
  }
  // The operator for one zero bit, then two and four.
  const odd: number[] = [0xedb88320]
  for (let n = 1, row = 1; n < 32; n++, row <<= 1) odd[n] = row >>> 0
  const even: number[] = []
  square(even, odd)
  square(odd, even)
  let crc = crc1 >>> 0
  let len = len2
  // Apply len2 zero bytes to crc1 (the first squaring gives the operator for one zero byte).
  for (;;) {
    square(even, odd)
    if (len & 1) crc = times(even, crc)
    len = Math.floor(len / 2)
    if (len === 0) break
    square(odd, even)
    if (len & 1) crc = times(odd, crc)
    len = Math.floor(len / 2)
    if (len === 0) break
  }
  return (crc ^ crc2) >>> 0
}
