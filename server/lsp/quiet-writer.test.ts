/** A write to a language server that died resolves (reported once) instead of rejecting unobserved. */
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { StreamMessageWriter } from 'vscode-languageserver-protocol/node.js'
import { quietWriter } from './quiet-writer.ts'

const note = { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 1 } }

describe('quietWriter', () => {
  it('a write to a destroyed stream rejects on the plain writer, resolves on the quiet one, and reports once', async () => {
    const dead = new PassThrough()
    dead.on('error', () => {})
    dead.destroy()
    await expect(new StreamMessageWriter(dead).write(note)).rejects.toThrow()

    const failures: string[] = []
    const w = quietWriter(new StreamMessageWriter(dead), (e) => failures.push(e.message))
    await expect(w.write(note)).resolves.toBeUndefined()
    await expect(w.write(note)).resolves.toBeUndefined()
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatch(/destroyed|EPIPE/)
  })

  it('passes writes through while the stream is alive', async () => {
    const live = new PassThrough()
    const w = quietWriter(new StreamMessageWriter(live), () => {
      throw new Error('no failure expected')
    })
    await w.write(note)
    expect(String(live.read())).toContain('"$/cancelRequest"')
  })
})
