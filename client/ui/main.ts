/**
 * The web console served at `/ui` (bundled into dist/ui/app.js): enter the token, create or pick
 * a session, watch its events stream, answer permission prompts, cancel, undo/redo, see the
 * cost. It talks to the server only through the client SDK (`chimera/client`), on the page's
 * own origin. The token lives in sessionStorage (this tab only), never in a URL.
 */
import { ChimeraApiError, createChimeraClient, type ChimeraClient, type PermissionDecision } from '../index.ts'
import { byId, el } from './dom.ts'
import { View } from './render.ts'

const TOKEN_KEY = 'chimera.token'
let client: ChimeraClient = connect(sessionStorage.getItem(TOKEN_KEY) ?? '')
let current: { id: string; view: View; stop: AbortController } | undefined

function connect(token: string): ChimeraClient {
  return createChimeraClient({ baseUrl: location.origin, token: token || undefined })
}

function status(text: string, error = false): void {
  const s = byId('status')
  s.textContent = text
  s.classList.toggle('error', error)
}

function explain(err: unknown): string {
  if (ChimeraApiError.is(err)) return err.body?.message ? `${err.code}: ${err.body.message}` : err.message
  return err instanceof Error ? err.message : String(err)
}

/** Runs a user action, reporting its failure in the status line. */
async function act(what: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn()
  } catch (err) {
    status(`${what} failed — ${explain(err)}`, true)
  }
}

async function refreshSessions(): Promise<void> {
  const { sessions } = await client.sessions.list({ limit: 50 })
  const list = byId('sessions')
  list.replaceChildren(
    ...sessions.map((s) => {
      const b = el('button', { text: `${s.prompt || s.session_id}`, attrs: { type: 'button', title: s.session_id, 'data-session': s.session_id } })
      if (s.session_id === current?.id) b.classList.add('current')
      b.addEventListener('click', () => void act('opening the session', () => show(s.session_id)))
      return el('li', {}, b)
    }),
  )
  status(`connected · ${sessions.length} session${sessions.length === 1 ? '' : 's'}`)
}

function updateBar(): void {
  if (!current) return
  byId('cost').textContent = current.view.cost
  byId('run-state').textContent = current.view.running ? 'running' : 'idle'
  byId<HTMLButtonElement>('cancel').disabled = !current.view.running
}

/** Shows a session: replays its events, then follows it live, reopening after each turn's `end`. */
async function show(id: string): Promise<void> {
  current?.stop.abort()
  const view = new View(byId('events'), { answer: (requestId, decision) => answer(id, requestId, decision) })
  const stop = new AbortController()
  current = { id, view, stop }
  byId('session').hidden = false
  byId('session-id').textContent = id
  for (const b of document.querySelectorAll<HTMLButtonElement>('#sessions button')) b.classList.toggle('current', b.dataset.session === id)
  updateBar()
  let from = 0
  while (!stop.signal.aborted) {
    const stream = client.sessions.events(id, { from, signal: stop.signal })
    let delivered = 0
    for await (const ev of stream) {
      delivered++
      from = ev.seq
      view.add(ev)
      updateBar()
    }
    // `end` after a turn: follow the next one from here. A stream that ended with nothing new
    // (the session went away) stops following.
    if (stop.signal.aborted || (delivered === 0 && stream.end?.success === false)) break
    if (delivered === 0) await new Promise((r) => setTimeout(r, 1000))
  }
}

async function answer(sessionId: string, requestId: string, decision: PermissionDecision): Promise<void> {
  try {
    await client.tool.approve({ session_id: sessionId, request_id: requestId, decision })
    status(`answered ${decision}`)
  } catch (err) {
    status(`answering failed — ${explain(err)}`, true)
    throw err
  }
}

function wire(): void {
  const token = byId<HTMLInputElement>('token')
  token.value = sessionStorage.getItem(TOKEN_KEY) ?? ''
  byId('token-form').addEventListener('submit', (e) => {
    e.preventDefault()
    sessionStorage.setItem(TOKEN_KEY, token.value)
    client = connect(token.value)
    void act('connecting', refreshSessions)
  })
  byId('refresh').addEventListener('click', () => void act('listing sessions', refreshSessions))
  byId('new-session').addEventListener('submit', (e) => {
    e.preventDefault()
    const prompt = byId<HTMLTextAreaElement>('prompt')
    void act('starting a session', async () => {
      const { session_id } = await client.sessions.create({ prompt: prompt.value })
      prompt.value = ''
      void act('streaming', () => show(session_id))
      await refreshSessions()
    })
  })
  byId('turn').addEventListener('submit', (e) => {
    e.preventDefault()
    const prompt = byId<HTMLTextAreaElement>('turn-prompt')
    if (!current) return
    const id = current.id
    void act('sending', async () => {
      await client.sessions.addTurn(id, prompt.value)
      prompt.value = ''
    })
  })
  byId('cancel').addEventListener('click', () => current && void act('cancelling', () => client.sessions.cancel(current!.id)))
  byId('undo').addEventListener('click', () => current && void act('undo', async () => status((await client.sessions.undo(current!.id)).message)))
  byId('redo').addEventListener('click', () => current && void act('redo', async () => status((await client.sessions.redo(current!.id)).message)))
  // Connect at once when this tab already has a token; otherwise wait for the form (a server
  // without auth needs one click on Connect with the field empty).
  if (token.value) void act('connecting', refreshSessions)
  else status('enter the token and connect')
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', wire)
else wire()
