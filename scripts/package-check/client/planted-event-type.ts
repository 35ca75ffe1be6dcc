// Planted mistake: an event type that does not exist.
import { createChimeraClient } from '@chimera-agent/client'

export async function planted(): Promise<number> {
  let n = 0
  const client = createChimeraClient({ baseUrl: 'http://127.0.0.1:5173' })
  for await (const ev of client.sessions.events('s')) if (ev.type === 'text_deltas') n++
  return n
}
