// Planted mistake: a field of another event type (`text` is on text_delta, not tool_call).
import { createChimeraClient } from '@chimera-agent/client'

export async function planted(): Promise<string> {
  const client = createChimeraClient({ baseUrl: 'http://127.0.0.1:5173' })
  for await (const ev of client.sessions.events('s')) if (ev.type === 'tool_call') return ev.metadata.text
  return ''
}
