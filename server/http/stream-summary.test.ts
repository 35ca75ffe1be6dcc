/**
 * A turn's summary is written shortly after the turn ends (core/summary-writer.ts): a stream
 * opened after that end (the session idle again) holds the turn's terminal record until the
 * summary covering it is on disk, so a client that saw the turn end finds it in the listing of
 * any instance that reads the store.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionSummary } from '../../generated/schemas.gen.ts'
import { testEnv, until, within, type TestEnv } from '../core/fixtures/harness.ts'
import { createLogger } from '../log.ts'
import { FileEventStore } from '../store/file-store.ts'
import { eventlogRoot } from '../store/paths.ts'
import { createHttpServerApp, type HttpServerApp } from './server-app.ts'

let env: TestEnv | undefined
let http: HttpServerApp | undefined
let store: FileEventStore | undefined
/** Lets a held summary write go on (so the store closes when a test fails midway). */
let open: () => void = () => {}
afterEach(async () => {
  open()
  http?.close()
  await store?.close()
  await env?.cleanup()
  env = http = store = undefined
})

describe("a stream opened after a turn's end", () => {
  it("sends the turn's terminal record only once the summary covering it is written", async () => {
    env = testEnv('chimera-stream-summary-')
    const order: string[] = []
    let gated = false
    let started = 0
    const gate = new Promise<void>((r) => (open = r))
    store = new (class extends FileEventStore {
      override async writeSummary(id: string, summary: SessionSummary): Promise<void> {
        if (!gated) return super.writeSummary(id, summary)
        started++
        await gate
        await super.writeSummary(id, summary)
        order.push(`summary written at ${summary.event_count}`)
      }
    })({ root: eventlogRoot(env.home) })
    const manager = env.manager({ store })
    http = createHttpServerApp({
      version: 't',
      startedAt: new Date(),
      logger: createLogger({ level: 'error', sink: () => {} }),
      manager,
    })
    const s = await manager.create()
    gated = true
    await within(s.prompt('!say hi').done, 5000, 'the turn')
    expect(s.status).toBe('idle')
    const last = s.lastSeq

    const res = await http.app.fetch(new Request(`http://127.0.0.1/sessions/${s.id}/events`))
    expect(res.status).toBe(200)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        text += value
        if (text.includes(`id: ${last}\n`) && !order.includes('terminal record')) order.push('terminal record')
      }
    })()
    // Every record before the terminal one arrives, and the summary write has begun (held here).
    await until(() => text.includes(`id: ${last - 1}\n`) && started > 0, 5000, 'the records before the last')
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
    expect(order).toEqual([])
    open()
    await within(reading, 5000, 'the stream to end')
    expect(order).toEqual([`summary written at ${last}`, 'terminal record'])
    expect(text).toContain('event: end')
    const onDisk = JSON.parse(
      readFileSync(join(eventlogRoot(env.home), s.id, 'summary.json'), 'utf8'),
    ) as SessionSummary
    expect(onDisk.event_count).toBe(last)
  })
})
