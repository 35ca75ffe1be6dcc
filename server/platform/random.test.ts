import { afterEach, describe, expect, it, vi } from 'vitest'
import { randomBytes, randomReady, randomUUID } from './random.ts'

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('random ids and bytes', () => {
  it('gives version 4 UUIDs in crypto.randomUUID form, none repeated across pools', async () => {
    await randomReady()
    const ids = Array.from({ length: 2_000 }, () => randomUUID()) // 32 KB: the pool and node:crypto in turn
    for (const id of ids) expect(id).toMatch(V4)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('gives bytes of the asked length, never the same bytes twice, larger requests included', async () => {
    await randomReady()
    for (const n of [0, 1, 16, 33, 4_096, 10_000]) expect(randomBytes(n)).toHaveLength(n)
    const a = randomBytes(32)
    const b = randomBytes(32)
    expect(a.equals(b)).toBe(false)
    // A handed-out buffer is a copy: the pool's later use does not change it.
    const kept = Buffer.from(a)
    for (let i = 0; i < 300; i++) randomBytes(32)
    expect(a.equals(kept)).toBe(true)
  })

  it('spreads its bits: each of the 128 bit positions is set in roughly half of 2,000 draws', () => {
    const counts = new Array<number>(128).fill(0)
    for (let i = 0; i < 2_000; i++) {
      const b = randomBytes(16)
      for (let bit = 0; bit < 128; bit++) if (b[bit >> 3]! & (1 << (bit & 7))) counts[bit]!++
    }
    // Binomial(2000, 0.5): sd 22; 850..1150 is beyond 6 sd.
    for (const c of counts) expect(c).toBeGreaterThan(850)
    for (const c of counts) expect(c).toBeLessThan(1_150)
  })
})

describe('where the bytes come from', () => {
  afterEach(() => {
    vi.doUnmock('node:fs')
    vi.doUnmock('./builtins.ts')
    vi.resetModules()
  })

  async function withCountedCrypto(): Promise<{ used: () => number }> {
    const real = await vi.importActual<typeof import('node:crypto')>('node:crypto')
    let used = 0
    vi.doMock('./builtins.ts', () => ({
      crypto: () => {
        used++
        return real
      },
    }))
    return { used: () => used }
  }

  it('from the device once its first read finished, without node:crypto', async () => {
    vi.resetModules()
    vi.doMock('./builtins.ts', () => ({
      crypto: () => {
        throw new Error('node:crypto used')
      },
    }))
    const r = await import('./random.ts')
    await r.randomReady()
    const ids = Array.from({ length: 200 }, () => r.randomUUID())
    for (const id of ids) expect(id).toMatch(V4)
    expect(new Set(ids).size).toBe(200)
    expect(r.randomBytes(64)).toHaveLength(64)
  })

  it('from node:crypto where the device cannot be opened, which is tried once', async () => {
    vi.resetModules()
    const opened: string[] = []
    vi.doMock('node:fs', async (orig) => ({
      ...(await orig<typeof import('node:fs')>()),
      open: (path: string, _flags: string, cb: (err: Error) => void) => {
        opened.push(path)
        queueMicrotask(() => cb(Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })))
      },
    }))
    const crypto = await withCountedCrypto()
    const r = await import('./random.ts')
    await r.randomReady()
    const ids = Array.from({ length: 50 }, () => r.randomUUID())
    for (const id of ids) expect(id).toMatch(V4)
    expect(new Set(ids).size).toBe(50)
    expect(r.randomBytes(24)).toHaveLength(24)
    expect(crypto.used()).toBe(51)
    expect(opened).toEqual(['/dev/urandom'])
  })

  it('from node:crypto where the path is not the urandom device (a regular file, /dev/zero mounted over it)', async () => {
    vi.resetModules()
    for (const fake of [
      { isCharacterDevice: () => false, rdev: 0 },
      { isCharacterDevice: () => true, rdev: (1 << 8) | 5 }, // 1:5 is /dev/zero
    ]) {
      vi.resetModules()
      vi.doMock('node:fs', async (orig) => {
        const fs = await orig<typeof import('node:fs')>()
        return {
          ...fs,
          fstat: (_fd: number, cb: (err: null, st: unknown) => void) => queueMicrotask(() => cb(null, fake)),
        }
      })
      const crypto = await withCountedCrypto()
      const r = await import('./random.ts')
      await r.randomReady()
      expect(r.randomUUID()).toMatch(V4)
      expect(crypto.used()).toBe(1)
    }
  })

  it('does not make a caller wait for a device that never answers', async () => {
    vi.resetModules()
    vi.doMock('node:fs', async (orig) => ({
      ...(await orig<typeof import('node:fs')>()),
      open: () => {}, // never calls back (a FIFO opened without O_NONBLOCK would do this)
    }))
    const crypto = await withCountedCrypto()
    const r = await import('./random.ts')
    await r.randomReady()
    expect(r.randomUUID()).toMatch(V4)
    expect(crypto.used()).toBe(1)
  })
})
