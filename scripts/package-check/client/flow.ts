// The whole flow of docs/client.md against the installed @chimera-agent/client, typed with no
// casts and no `any`: create, stream with resume, approve, list, transcript, delete.
import {
  ChimeraApiError,
  answerPermission,
  continueSession,
  createChimeraClient,
  startSession,
  type SseEnvelope,
} from '@chimera-agent/client'

declare const env: Record<string, string | undefined>
declare function render(ev: SseEnvelope): void
declare function askUser(question: string): Promise<boolean>

export async function flow(baseUrl: string): Promise<string[]> {
  const out: string[] = []
  const client = createChimeraClient({ baseUrl, token: env['OTTER_SERVER_TOKEN'] })
  const { session_id } = await client.sessions.create({ prompt: 'list the files' })

  // Stream with resume: `from` is the last counter seen; the stream reconnects by itself.
  let lastSeenSeq = 0
  const ctl = new AbortController()
  const stream = client.sessions.events(session_id, {
    from: lastSeenSeq,
    signal: ctl.signal,
    reconnect: { maxDelayMs: 10_000, maxAttempts: 20 },
    onRetry: (r) => out.push(`reconnecting in ${Math.round(r.delayMs)} ms after id ${r.lastEventId}`),
  })
  for await (const ev of stream) {
    lastSeenSeq = ev.seq
    render(ev)
    if (ev.type === 'text_delta') out.push(ev.metadata.text)
    if (ev.type === 'tool_call') out.push(`[${ev.metadata.tool}] ${JSON.stringify(ev.metadata.args)}`)
    // Approve: answer a permission request from the stream.
    if (ev.type === 'permission_request') await answerPermission(client, session_id, ev.metadata.request_id, 'allow')
  }
  const end: { session_id: string; success: boolean } | undefined = stream.end
  out.push(`ended ${String(end?.success)} after ${stream.stats.reconnects} reconnections, resumed from ${lastSeenSeq}`)
  const resumed = client.sessions.events(session_id, { from: lastSeenSeq })
  for await (const ev of resumed) out.push(ev.type)

  // Approve through the helper, then another turn.
  const run = await startSession(
    client,
    { prompt: '!call Write {"path":"a.txt","content":"hi"}' },
    {
      onEvent: (ev) => render(ev),
      onPermission: async (req) =>
        (await askUser(`${req.metadata.tool} ${JSON.stringify(req.metadata.args)}?`)) ? 'allow' : 'deny',
    },
  )
  const next = await continueSession(client, run.session_id, 'now read it back')
  out.push(`${run.success} ${run.output} ${next.success}`)
  await client.tool.approve({ session_id: run.session_id, request_id: 'perm-1', decision: 'deny' })

  // List.
  const { sessions } = await client.sessions.list()
  for (const s of sessions) out.push(s.session_id)

  // Transcript: text (html or md) or the JSON record.
  const md: string = await client.sessions.transcript(session_id, 'md')
  const json = await client.sessions.transcriptJson(session_id)
  out.push(md, JSON.stringify(json))

  try {
    await client.sessions.undo(session_id)
  } catch (err) {
    if (ChimeraApiError.is(err, 'nothing_to_undo')) out.push(`${err.status} ${err.code}`)
    else throw err
  }

  // Delete: a singular session (`/session/{id}`), with its own token.
  const created = await client.session.create({})
  await client.session.delete(created.session_id, { token: created.session_token })
  return out
}
