/**
 * The web console served at `/ui` (bundled into dist/ui/app.js): enter the token, create or pick
 * a session, watch its events stream, answer permission prompts, cancel, undo/redo, rename and
 * delete sessions, see the cost. It follows the shown session across turns, drops and server
 * restarts (the connection state is shown in the header). It talks to the server only through
 * the client SDK (`chimera/client`), on the page's own origin. The token lives in sessionStorage
 * (this tab only), never in a URL. See docs/client.md (the web console).
 */
import {
  ChimeraApiError,
  ChimeraClientError,
  createChimeraClient,
  type ChimeraClient,
  type PermissionDecision,
} from '../index.ts'
import { Link } from './connection.ts'
import { byId } from './dom.ts'
import { View } from './render.ts'
import { renderList, titleOf } from './session-list.ts'

const TOKEN_KEY = 'chimera.token'
/** The longest wait between two reconnection attempts of the event stream. */
const MAX_RETRY_MS = 4000
let client: ChimeraClient = connect(sessionStorage.getItem(TOKEN_KEY) ?? '')
let current: { id: string; prompt?: string; title?: string; view: View; stop: AbortController } | undefined
const link = new Link()
link.onReconnected = () => {
  const s = byId('status')
  if (s.dataset.cause !== 'unreachable') return
  clearTimeout(statusTimer)
  s.classList.remove('shown')
}

function connect(token: string): ChimeraClient {
  return createChimeraClient({ baseUrl: location.origin, token: token || undefined })
}

let statusTimer: ReturnType<typeof setTimeout> | undefined
/** Shows a passing message; one caused by an unreachable server goes as soon as it answers again. */
function status(text: string, error = false, unreachable = false): void {
  const s = byId('status')
  s.textContent = text
  s.classList.toggle('error', error)
  s.dataset.cause = unreachable ? 'unreachable' : ''
  s.classList.add('shown')
  clearTimeout(statusTimer)
  statusTimer = setTimeout(() => s.classList.remove('shown'), error ? 8000 : 3000)
}

function explain(err: unknown): string {
  if (ChimeraApiError.is(err)) return err.body?.message ? `${err.code}: ${err.body.message}` : err.message
  return err instanceof Error ? err.message : String(err)
}

/** Runs a user action, reporting its failure; an answer from the server means it is reachable. */
async function act(what: string, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn()
    return true
  } catch (err) {
    const unreachable = !ChimeraApiError.is(err) && !ChimeraClientError.is(err)
    if (unreachable) {
      link.unreachable()
      void probe()
    } else if (ChimeraApiError.is(err) && link.state !== 'connected') link.connected()
    status(`${what} failed — ${explain(err)}`, true, unreachable)
    return false
  }
}

async function refreshSessions(): Promise<void> {
  const { sessions } = await client.sessions.list({ limit: 50 })
  link.connected()
  // A session just started may be listed before its first prompt is recorded: the page knows it.
  for (const s of sessions) if (!s.prompt && s.session_id === current?.id && current.prompt) s.prompt = current.prompt
  const shown = current && sessions.find((s) => s.session_id === current!.id)
  if (shown) setTitle(shown.title ?? null)
  renderList(byId('sessions'), sessions, current?.id, {
    open: (id) => {
      const s = sessions.find((x) => x.session_id === id)
      void act('opening the session', () => show(id, s?.prompt, s?.title))
    },
    remove: (id) => act('deleting the session', () => remove(id)),
    rename: async (id, title) => {
      let summary: Awaited<ReturnType<typeof client.sessions.rename>> | undefined
      const ok = await act('renaming the session', async () => {
        summary = await client.sessions.rename(id, title || null)
      })
      if (ok && current?.id === id) setTitle(summary?.title ?? null)
      return ok ? summary : undefined
    },
  })
}

/** The open session's title changed (renamed here, in another client, or seen on its stream). */
function setTitle(title: string | null): void {
  if (!current) return
  if (title === null) delete current.title
  else current.title = title
  byId('session-title').textContent = titleOf({ session_id: current.id, prompt: current.prompt, title: current.title })
}

async function remove(id: string): Promise<void> {
  await client.session.delete(id)
  if (current?.id === id) close()
  status('session deleted')
}

function close(): void {
  current?.stop.abort()
  current = undefined
  byId('session').hidden = true
  byId('placeholder').hidden = false
}

function updateBar(): void {
  if (!current) return
  const { view } = current
  byId('cost').textContent = view.cost
  const state = byId('run-state')
  const now = view.running ? 'running' : view.seen === 0 ? 'loading' : 'idle'
  state.textContent = now
  state.dataset.state = now
  byId<HTMLButtonElement>('cancel').disabled = !view.running
}

let listTimer: ReturnType<typeof setTimeout> | undefined
function refreshSoon(): void {
  clearTimeout(listTimer)
  listTimer = setTimeout(() => void refreshSessions().catch(() => {}), 300)
}

/** Shows a session: replays its events, then follows it live across turns and reconnections. */
async function show(id: string, prompt?: string, title?: string): Promise<void> {
  current?.stop.abort()
  const view = new View(byId('events'), {
    answer: (requestId, decision) => answer(id, requestId, decision),
    // A rename from any client arrives on the stream: the bar follows it, the list is refreshed.
    titled: (t) => {
      if (current?.id !== id) return
      setTitle(t)
      refreshSoon()
    },
  })
  const stop = new AbortController()
  current = { id, prompt, ...(title ? { title } : {}), view, stop }
  byId('placeholder').hidden = true
  byId('session').hidden = false
  byId('session-id').textContent = id
  byId('session-title').textContent = titleOf({ session_id: id, prompt, title })
  for (const li of document.querySelectorAll<HTMLElement>('#sessions li'))
    li.classList.toggle('current', li.dataset.session === id)
  updateBar()
  await follow(id, view, stop.signal)
}

/**
 * The plural stream ends after each turn (and with the server's shutdown); open it again from
 * the last event seen. While the server is away the SDK's stream retries with backoff, which the
 * connection indicator shows; a session that no longer exists (404) stops the following.
 */
async function follow(id: string, view: View, signal: AbortSignal): Promise<void> {
  let from = 0
  while (!signal.aborted) {
    const stream = client.sessions.events(id, {
      from,
      signal,
      reconnect: { maxDelayMs: MAX_RETRY_MS },
      onRetry: (r) => link.retrying(r),
      onOpen: () => {
        // Back after a drop or a restart: the list may have changed meanwhile.
        if (link.state !== 'connected') refreshSoon()
        link.connected()
      },
    })
    let delivered = 0
    try {
      for await (const ev of stream) {
        delivered++
        from = ev.seq
        view.add(ev)
        updateBar()
      }
    } catch (err) {
      if (signal.aborted) return
      if (ChimeraApiError.is(err) && err.status === 404) {
        status('this session no longer exists', true)
        return
      }
      throw err
    }
    if (signal.aborted) return
    if (stream.end) refreshSoon()
    // An `end` with nothing new is the server going away (or the session leaving it): wait a
    // moment before asking again, so a stream that keeps ending cannot spin.
    if (delivered === 0) await sleep(1000, signal)
  }
}

let probing = false
/**
 * A call found no server: ask again (the session list) with backoff until one answers, so the
 * indicator comes back to `connected` even when no session stream is open to notice.
 */
async function probe(): Promise<void> {
  if (probing) return
  probing = true
  try {
    for (let attempt = 1, delay = 1000; ; attempt++, delay = Math.min(delay * 2, MAX_RETRY_MS)) {
      await sleep(delay)
      if (link.state === 'connected') return
      try {
        await refreshSessions()
        return
      } catch (err) {
        if (ChimeraApiError.is(err) || ChimeraClientError.is(err)) return link.connected()
        if (attempt >= 3 || !navigator.onLine)
          link.set('offline', navigator.onLine ? 'server unreachable · retrying' : 'no network')
      }
    }
  } finally {
    probing = false
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true })
  })
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

/** Follows the network: offline at once when the browser loses it, a fresh connection when it returns. */
function watchNetwork(): void {
  // Coming back to the tab: other clients may have started or ended sessions meanwhile.
  document.addEventListener(
    'visibilitychange',
    () => document.visibilityState === 'visible' && link.state === 'connected' && refreshSoon(),
  )
  addEventListener('offline', () => link.set('offline', 'no network'))
  addEventListener('online', () => {
    link.set('reconnecting', 'network is back')
    if (current) {
      const { id, prompt, title } = current
      void act('following the session', () => show(id, prompt, title))
    }
    refreshSoon()
  })
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
    const text = prompt.value
    void act('starting a session', async () => {
      const { session_id } = await client.sessions.create({ prompt: text })
      prompt.value = ''
      void act('streaming', () => show(session_id, text))
      await refreshSessions()
    })
  })
  const turnPrompt = byId<HTMLTextAreaElement>('turn-prompt')
  byId('turn').addEventListener('submit', (e) => {
    e.preventDefault()
    if (!current) return
    const id = current.id
    void act('sending', async () => {
      await client.sessions.addTurn(id, turnPrompt.value)
      turnPrompt.value = ''
    })
  })
  // Ctrl+Enter (⌘+Enter) sends, in either box.
  for (const [box, form] of [
    ['turn-prompt', 'turn'],
    ['prompt', 'new-session'],
  ] as const) {
    byId(box).addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) byId<HTMLFormElement>(form).requestSubmit()
    })
  }
  byId('cancel').addEventListener(
    'click',
    () => current && void act('cancelling', () => client.sessions.cancel(current!.id)),
  )
  byId('undo').addEventListener(
    'click',
    () => current && void act('undo', async () => status((await client.sessions.undo(current!.id)).message)),
  )
  byId('redo').addEventListener(
    'click',
    () => current && void act('redo', async () => status((await client.sessions.redo(current!.id)).message)),
  )
  watchNetwork()
  // Connect at once when this tab already has a token; otherwise wait for the form (a server
  // without auth needs one click on Connect with the field empty).
  link.set('offline', 'enter the token and connect')
  byId('link-text').textContent = 'not connected'
  if (token.value) void act('connecting', refreshSessions)
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', wire)
else wire()
