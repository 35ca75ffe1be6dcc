import { describe, expect, it } from 'vitest'
import { ChimeraError } from '../errors.ts'
import { routePrompt, type CommandRenderer } from './slash-commands.ts'

const commands: CommandRenderer = {
  render(name, args) {
    if (name === 'greet') return `say hello to ${args}`
    if (name === 'broken') throw new Error('template missing')
    if (name === 'huge') throw new ChimeraError('message_too_large', 'too large')
    return undefined
  },
}

describe('routePrompt', () => {
  it('sends plain text and unknown commands to the model unchanged', () => {
    expect(routePrompt('hello', commands)).toEqual({ kind: 'turn', message: 'hello' })
    expect(routePrompt('/nope x', commands)).toEqual({ kind: 'turn', message: '/nope x' })
    expect(routePrompt('/greet bob', undefined)).toEqual({ kind: 'turn', message: '/greet bob' })
  })
  it('rewinds, and answers a malformed rewind with its usage', () => {
    expect(routePrompt('/undo --steps 3', commands)).toEqual({ kind: 'undo', steps: 3 })
    expect(routePrompt('/redo', commands)).toEqual({ kind: 'redo', steps: 1 })
    expect(routePrompt('/undo many', commands)).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^usage: \/undo/),
    })
  })
  it("runs a custom command's rendering, and reports a failing one", () => {
    expect(routePrompt('/greet bob', commands)).toEqual({
      kind: 'turn',
      message: 'say hello to bob',
      command: { name: 'greet', arguments: 'bob' },
    })
    expect(routePrompt('/broken', commands)).toEqual({ kind: 'error', message: '/broken: template missing' })
    expect(() => routePrompt('/huge', commands)).toThrow(ChimeraError)
  })
})
