/**
 * The pool a replay's page and chunk buffers come from (buffer-pool.ts): a buffer given back is
 * handed out again, at most `maxFree` wait, and what the pool did not hand out is never kept.
 */
import { describe, expect, it } from 'vitest'
import { BufferPool } from './buffer-pool.ts'

describe('a buffer pool', () => {
  it('hands a buffer given back out again, keeps at most maxFree, and ignores buffers it did not hand out', () => {
    const pool = new BufferPool(1024, 2)
    const a = pool.take()
    const b = pool.take()
    const c = pool.take()
    expect(a.length).toBe(1024)
    expect(new Set([a.buffer, b.buffer, c.buffer]).size).toBe(3)
    pool.give(a)
    pool.give(a)
    pool.give(a.subarray(0, 512))
    pool.give(Buffer.alloc(1024))
    pool.give(Buffer.alloc(2048).subarray(0, 1024))
    expect(pool.stats().free).toBe(1)
    pool.give(b)
    pool.give(c)
    expect(pool.stats()).toMatchObject({ taken: 3, allocated: 3, free: 2 })
    const again = [pool.take(), pool.take(), pool.take()]
    expect(again.filter((x) => x === a || x === b || x === c)).toHaveLength(2)
    expect(pool.stats()).toMatchObject({ taken: 6, allocated: 4, free: 0 })
  })
})
