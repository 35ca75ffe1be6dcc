/**
 * `@chimera-agent/client/msw`: mock Chimera servers for front-end tests, on msw 2.x (a peer
 * dependency). `createChimeraMock()` gives handlers for every operation of the HTTP spec, with
 * spec-valid bodies and the bearer tiers, and event streams that replay a recorded transcript
 * with real `id:` lines and `Last-Event-ID` resume — by default the recorded sample session, or
 * your own recording (`(await client.sessions.get(id)).events`, the events a stream yielded, or a
 * saved stream body through `parseSseRecording`).
 *
 * @example
 * import { setupServer } from 'msw/node'
 * const mock = createChimeraMock({ baseUrl: 'http://chimera.test', token: 'tok' })
 * const server = setupServer(...mock.handlers)
 * server.listen({ onUnhandledRequest: 'error' })
 */
import type { RequestHandler } from 'msw'
import { buildHandlers, OPERATIONS } from './handlers.ts'
import { parseSseRecording } from './recording.ts'
import { sampleTranscript, SAMPLE_SESSION_ID } from './sample-transcript.ts'
import { MockState, toChimeraEvents, toLoopRecord, toSseEnvelope, type MockSession, type Recording } from './state.ts'

export interface ChimeraMockOptions {
  /** Origin the handlers answer on. Default `http://127.0.0.1:5173`. */
  baseUrl?: string
  /** Master token: when set, requests need it (or a session's own token on the `/session/{id}` routes). */
  token?: string
  /** What each turn replays. Default: the recorded sample session (sampleTranscript). */
  transcript?: Recording
  /** `retry:` on the first record of each stream (ms). Default 1000. */
  retryMs?: number
  /** Working directory the mock reports. Default `/workspace`. */
  cwd?: string
  /**
   * Turns stop at each recorded permission request until it is answered with
   * `POST /tool/approve` (allow plays on; deny fails the call). Default false: the recorded
   * answer is replayed.
   */
  askPermissions?: boolean
}

export interface ChimeraMock {
  handlers: RequestHandler[]
  state: MockState
}

export function createChimeraMock(opts: ChimeraMockOptions = {}): ChimeraMock {
  const state = new MockState(opts.transcript ?? sampleTranscript, opts.cwd, { askPermissions: opts.askPermissions })
  return {
    state,
    handlers: buildHandlers(state, {
      baseUrl: opts.baseUrl ?? 'http://127.0.0.1:5173',
      token: opts.token,
      retryMs: opts.retryMs ?? 1000,
    }),
  }
}

/** Just the handlers: `setupServer(...chimeraHandlers())`. */
export const chimeraHandlers = (opts: ChimeraMockOptions = {}): RequestHandler[] => createChimeraMock(opts).handlers

export {
  MockState,
  OPERATIONS as MOCK_OPERATIONS,
  parseSseRecording,
  sampleTranscript,
  SAMPLE_SESSION_ID,
  toChimeraEvents,
  toLoopRecord,
  toSseEnvelope,
  type MockSession,
  type Recording,
}
