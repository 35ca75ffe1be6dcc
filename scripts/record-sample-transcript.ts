/**
 * Records the sample session the msw handlers replay by default (client/msw/sample-transcript.ts):
 * the real agent core on the offline model, `--approval ask` with the permission allowed, a
 * reasoning block, streamed text with markup in it, a Write (tool card and diff) and the turn's
 * result. Volatile fields (ids, times, the temporary workspace path, durations) are normalised so
 * a re-recording differs only where the core's behaviour changed.
 *
 *   node_modules/.bin/tsx scripts/record-sample-transcript.ts
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SessionManager } from '../server/core/manager.ts'
import { offlineModels } from '../server/providers/registry.ts'

export const SAMPLE_PROMPT =
  '!think The user wants a greeting file.\n!say I will write <b>hello.txt</b> & check it.\n!call Write {"path":"hello.txt","content":"hello <world>\\n"}'
export const SAMPLE_SESSION_ID = 'otter-20260101T000000Z-5a3c0000-0000-4000-8000-000000000001'

export async function recordSample(): Promise<unknown[]> {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-sample-')))
  const cwd = join(base, 'ws')
  const home = join(base, 'home')
  const { mkdirSync } = await import('node:fs')
  mkdirSync(cwd)
  mkdirSync(home)
  const manager = new SessionManager({ agent: 'otter', cwd, home, approval: 'ask', models: offlineModels() })
  try {
    const session = await manager.create()
    session.subscribe((e) => {
      if (e.type === 'permission_request')
        session.replyPermission((e.data as { request_id: string }).request_id, 'allow', 'http')
    })
    await session.prompt(SAMPLE_PROMPT).done
    await session.flush()
    const events = await session.events()
    const t0 = Date.parse('2026-01-01T00:00:00.000Z')
    const text = JSON.stringify(events)
      .replaceAll(session.id, SAMPLE_SESSION_ID)
      .replaceAll(cwd, '/workspace')
      .replace(/"duration_ms":[0-9.]+/g, '"duration_ms":3')
      .replace(/"evt-[0-9a-f-]+"/g, () => '"evt-@"')
    let n = 0
    return (JSON.parse(text) as { seq: number; id: string; ts: string; data: Record<string, unknown> }[]).map((e) => {
      n++
      const out = {
        ...e,
        id: `evt-00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        ts: new Date(t0 + e.seq * 100).toISOString(),
      }
      for (const k of ['message_id', 'request_id', 'call_id'] as const) {
        if (typeof out.data[k] === 'string') out.data = { ...out.data, [k]: `${k.split('_')[0]}-1` }
      }
      return out
    })
  } finally {
    manager.closeAll()
    await Promise.all(manager.live().map((s) => s.idle()))
    rmSync(base, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const events = await recordSample()
  const out = new URL('../client/msw/sample-transcript.ts', import.meta.url)
  writeFileSync(
    out,
    `/**\n * A recorded session (the agent core on the offline model, \`--approval ask\`, permission allowed):\n * what the msw handlers replay by default. Re-record with\n * \`node_modules/.bin/tsx scripts/record-sample-transcript.ts\`; do not edit by hand.\n */\nimport type { ChimeraEvent } from '../../generated/schemas.gen.ts'\n\nexport const SAMPLE_SESSION_ID = ${JSON.stringify(SAMPLE_SESSION_ID)}\n\nexport const sampleTranscript: ChimeraEvent[] = ${JSON.stringify(events, null, 2)}\n`,
  )
  process.stderr.write(`wrote ${events.length} events to ${out.pathname}\n`)
}
