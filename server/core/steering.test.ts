import { describe, expect, it } from 'vitest'
import { Steering, type SteerMessage } from './steering.ts'

const message = (id: string, written: Promise<boolean> = Promise.resolve(true)): SteerMessage => ({
  id,
  text: `text ${id}`,
  entry: { message_id: id, text: `text ${id}`, steer: true, accepted_at: 0, order: 0 },
  written,
})

describe('Steering', () => {
  it('is open from the turn start until the turn finishes with nothing waiting', async () => {
    const s = new Steering()
    expect(s.open).toBe(false)
    s.start()
    s.push(message('a'))
    expect(s.finish()).toBe(false)
    expect(s.open).toBe(true)
    expect((await s.take()).map((m) => m.id)).toEqual(['a'])
    expect(s.finish()).toBe(true)
    expect(s.open).toBe(false)
  })

  it('returns what was not taken when the turn ends, and holds nothing after', async () => {
    const s = new Steering()
    s.start()
    s.push(message('late'))
    expect(s.end().map((m) => m.id)).toEqual(['late'])
    expect(s.open).toBe(false)
    expect(await s.take()).toEqual([])
  })

  it('takes a message only once its entry is written, in the order sent; a refused one is dropped', async () => {
    const s = new Steering()
    s.start()
    let write!: (ok: boolean) => void
    s.push(message('slow', new Promise<boolean>((r) => (write = r))))
    s.push(message('refused', Promise.resolve(false)))
    s.push(message('fast'))
    let taken: SteerMessage[] | undefined
    const taking = s.take().then((t) => (taken = t))
    await Promise.resolve()
    expect(taken).toBeUndefined()
    // While the write is under way the turn may not finish.
    expect(s.finish()).toBe(false)
    write(true)
    await taking
    expect(taken!.map((m) => m.id)).toEqual(['slow', 'fast'])
    expect(s.finish()).toBe(true)
  })
})
