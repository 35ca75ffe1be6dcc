/**
 * What a session directory's listing showed, kept while the directory is unchanged
 * (docs/decisions/0470-listing-memo.md). A session read here without its owner marker is checked
 * against its directory before each use (another process may have written it since), and a stream
 * of it looks for event files after the segment; each of those was a `readdir` of the whole
 * directory (100,000 names for a long session). Every event another process writes is a new file
 * there, and a repair renames or removes files, so while the directory's mtime and ctime (and
 * inode) are the ones seen before a listing, the listing is still what `readdir` would give.
 *
 * A timestamp is only as fine as the file system's clock: an entry created in the same tick as
 * the change that set the mtime a stat saw leaves the mtime as it was. A listing is therefore kept
 * only when its stat was taken well after the directory last changed (`RACY_NS`, or `RACY_S_NS`
 * where timestamps are whole seconds), as git does for its index; otherwise the next check lists
 * the directory again.
 */
import { stat } from 'node:fs/promises'

/** What a listing of a session directory showed. */
export interface ListingFacts {
  /** Canonically named event files. */
  events: number
  /** The highest counter among them (0: none). */
  last: number
  /** No misnamed `event-*` file. */
  clean: boolean
}

/** A directory's identity and change times, and whether a listing after it may be kept. */
export interface DirStamp {
  ino: bigint
  mtimeNs: bigint
  ctimeNs: bigint
  /** The directory last changed long enough before the stat (see the module comment). */
  settled: boolean
}

/** Sub-second timestamps: a coarse kernel clock ticks every 1–10 ms. */
const RACY_NS = 100_000_000n
/** Whole-second timestamps (ext3, HFS+, FAT's two seconds). */
const RACY_S_NS = 3_000_000_000n
const SECOND_NS = 1_000_000_000n

/** The stamp of `dir` now (before a listing of it is read). */
export async function dirStamp(dir: string): Promise<DirStamp> {
  // The clock read before the stat: the time it is compared with is never later than the stat's.
  const now = BigInt(Date.now()) * 1_000_000n
  const s = await stat(dir, { bigint: true })
  const changed = s.mtimeNs > s.ctimeNs ? s.mtimeNs : s.ctimeNs
  const coarse = s.mtimeNs % SECOND_NS === 0n && s.ctimeNs % SECOND_NS === 0n
  return {
    ino: s.ino,
    mtimeNs: s.mtimeNs,
    ctimeNs: s.ctimeNs,
    settled: now - changed >= (coarse ? RACY_S_NS : RACY_NS),
  }
}

/** Listings of session directories by session id, each valid while its directory's stamp holds. */
export class ListingMemo {
  readonly #by = new Map<string, { stamp: DirStamp; facts: ListingFacts }>()

  /** Keep what a listing read after `stamp` showed (only when the stamp is settled). */
  record(id: string, stamp: DirStamp, facts: ListingFacts): void {
    if (stamp.settled) this.#by.set(id, { stamp, facts })
    else this.#by.delete(id)
  }

  /**
   * What the listing kept for `id` showed, when its directory has not changed since; undefined
   * when none is kept (no stat then) or the directory changed (the memo is dropped).
   */
  async current(id: string, dir: string): Promise<ListingFacts | undefined> {
    const kept = this.#by.get(id)
    if (!kept) return undefined
    let now: DirStamp
    try {
      now = await dirStamp(dir)
    } catch {
      this.#by.delete(id)
      return undefined
    }
    // Checked again after the await: a listing recorded meanwhile replaces this one.
    if (this.#by.get(id) !== kept) return undefined
    const { stamp } = kept
    if (now.ino === stamp.ino && now.mtimeNs === stamp.mtimeNs && now.ctimeNs === stamp.ctimeNs) return kept.facts
    this.#by.delete(id)
    return undefined
  }

  forget(id: string): void {
    this.#by.delete(id)
  }
}
