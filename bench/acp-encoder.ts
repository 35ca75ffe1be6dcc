/**
 * `session/update` notifications per second through the ACP encoder (the v1 event map, the
 * Connection's serialised line writer) into a real pipe drained by a child process. Prints the
 * rate (target ≥ 100k/s); asserts nothing.
 */
import { spawn } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { Connection } from '../client/wire/jsonrpc/connection.ts'
import { noopLogger } from '../server/log.ts'
import type { AnyEvent } from '../server/events/event-types.ts'
import { toV1Updates, type V1MapContext } from '../server/acp/v1/event-map.ts'

const N = Number(process.env.BENCH_NOTIFICATIONS ?? 200_000)
const sink = spawn('sh', ['-c', 'cat > /dev/null'], { stdio: ['pipe', 'ignore', 'ignore'] })
const conn = new Connection({ input: new PassThrough(), output: sink.stdin, maxLineBytes: 1 << 20, logger: noopLogger })
const ctx: V1MapContext = { cwd: '/w', configOptions: () => [], model: () => 'offline', mode: () => 'build' }
const sessionId = 'ferret-20260101T000000Z-00000000-0000-0000-0000-000000000000'
const event = (seq: number): AnyEvent =>
  ({
    seq,
    id: `evt-${seq}`,
    session_id: sessionId,
    type: 'text_delta',
    turn: 1,
    ts: '2026-01-01T00:00:00.000Z',
    data: { text: 'word ', message_id: 'm1', step: 1 },
  }) as AnyEvent

const t0 = process.hrtime.bigint()
let last: Promise<void> = Promise.resolve()
for (let i = 1; i <= N; i++) {
  for (const update of toV1Updates(event(i), ctx)) last = conn.notify('session/update', { sessionId, update })
  // Let the writer drain in batches, as a pump awaiting each write would.
  if (i % 1000 === 0) await last
}
await last
const secs = Number(process.hrtime.bigint() - t0) / 1e9
console.log(
  `${N} notifications in ${(secs * 1000).toFixed(0)} ms: ${Math.round(N / secs).toLocaleString('en')} /s (target ≥ 100,000 /s)`,
)
sink.stdin.end()
