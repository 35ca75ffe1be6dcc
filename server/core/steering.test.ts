import { describe, expect, it } from 'vitest'
import { Steering } from './steering.ts'

describe('Steering', () => {
  it('is open from the turn start until the turn finishes with nothing waiting', () => {
    const s = new Steering()
    expect(s.open).toBe(false)
    s.start()
    s.push('also this')
    expect(s.finish()).toBe(false)
    expect(s.open).toBe(true)
    expect(s.take()).toEqual(['also this'])
    expect(s.finish()).toBe(true)
    expect(s.open).toBe(false)
  })
  it('drops what was not taken when the turn ends', () => {
    const s = new Steering()
    s.start()
    s.push('late')
    s.end()
    expect(s.open).toBe(false)
    expect(s.take()).toEqual([])
  })
})
