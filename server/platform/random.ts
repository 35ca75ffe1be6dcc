/**
 * Random ids and bytes (UUID v4 for session, message and event ids; suffixes of temporary file
 * names; owner and session tokens) without `node:crypto`: loading it before the first answer costs
 * some 35 internal modules (2.5 ms of CPU on Node 20, 4 ms on Node 24), more than the ids
 * themselves (docs/decisions/0465-built-ins-after-the-answer.md). The bytes come from the kernel's
 * CSPRNG, `/dev/urandom` (the source OpenSSL itself seeds from), read 4 KiB at a time, without
 * blocking the event loop, into pools each byte of which is handed out once: the first read starts
 * when this module loads, the next as soon as a pool is taken into use. When no read has finished
 * yet, or the device cannot be read (Windows, a sandbox without `/dev`), `node:crypto` serves.
 */
import { close, constants, fstat, open, read, type Stats } from 'node:fs'
import { crypto } from './builtins.ts'

/**
 * A name part that keeps scratch files of one home apart (a lock's temporary file, the home's
 * write probe): the PID and 32 random bits. Not a secret (those files are created exclusively, in
 * the user's own home), so `Math.random` serves: no
 * `node:crypto`, and no wait for the pool below (the home probe runs before `otter serve` binds).
 */
export const scratchSuffix = (): string =>
  `${process.pid}-${Math.floor(Math.random() * 2 ** 32)
    .toString(16)
    .padStart(8, '0')}`

const DEVICE = '/dev/urandom'
const POOL_BYTES = 4096
/** The longest a caller of `randomReady` waits for the first read: past it, `node:crypto` serves. */
const READY_WAIT_MS = 50
/** The pool being handed out; `next` is its first unused byte. */
let pool: Buffer = Buffer.alloc(0)
let next = 0
/** A filled pool waiting to be taken into use. */
let spare: Buffer | undefined
let filling = false
/** False once the device failed: `node:crypto` from then on. */
let device = true
let firstSettled: () => void = () => {}
const first = new Promise<void>((resolve) => (firstSettled = resolve))

/** A character device, and on Linux the one `/dev/urandom` is (1:9: not `/dev/zero` mounted over it). */
function isUrandom(st: Stats): boolean {
  if (!st.isCharacterDevice()) return false
  if (process.platform !== 'linux') return true
  const major = (st.rdev >> 8) & 0xfff
  const minor = (st.rdev & 0xff) | ((st.rdev >> 12) & 0xfff00)
  return major === 1 && minor === 9
}

function fill(): void {
  if (filling || spare || !device) return
  filling = true
  const fail = (): void => {
    device = false
    filling = false
    firstSettled()
  }
  // Non-blocking, so a FIFO put at the path cannot hold a thread-pool thread (or the first id) for
  // ever; and only a character device is read: a regular file there would give the same bytes to
  // every pool and every process (what OpenSSL and libsodium check too).
  open(DEVICE, constants.O_RDONLY | constants.O_NONBLOCK, (err, fd) => {
    if (err) return fail()
    fstat(fd, (serr, st) => {
      if (serr || !isUrandom(st)) {
        close(fd, () => {})
        return fail()
      }
      const buf = Buffer.allocUnsafe(POOL_BYTES)
      read(fd, buf, 0, POOL_BYTES, null, (rerr, n) => {
        close(fd, () => {})
        if (rerr || n < 16) return fail()
        spare = buf.subarray(0, n)
        filling = false
        firstSettled()
      })
    })
  })
}
fill()

/** `n` bytes from the pools, copied out (then zeroed in the pool), or undefined when none are ready. */
function take(n: number): Buffer | undefined {
  if (next + n > pool.length) {
    if (!spare || n > spare.length) {
      fill()
      return undefined
    }
    pool.fill(0)
    pool = spare
    next = 0
    spare = undefined
    fill()
  }
  const out = Buffer.from(pool.subarray(next, next + n))
  pool.fill(0, next, next + n)
  next += n
  return out
}

/** `n` cryptographically strong random bytes. */
export function randomBytes(n: number): Buffer {
  return take(n) ?? crypto().randomBytes(n)
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** A random (version 4) UUID, lower-case, as `crypto.randomUUID` gives. */
export function randomUUID(): string {
  const b = take(16)
  if (!b) return crypto().randomUUID()
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = (i: number): string => HEX[b[i]!]!
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`
}

/**
 * Resolves once the first read of the device has finished (or failed): ids taken after it come
 * from the pool, without loading `node:crypto`. A process that makes an id right after its
 * modules load (a session created at start) awaits it first; never for more than 50 ms.
 */
export function randomReady(): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS).unref()))
  return Promise.race([first, waited]).finally(() => clearTimeout(timer))
}
