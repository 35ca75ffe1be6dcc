/**
 * serveAcpChannel in process: messages in, messages out, the connection served by serveAcp; a
 * sink that fails ends the connection (the rest of the output is dropped), and a detached
 * connection leaves a session's pending permission request pending when it ends.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { testEnv, type TestEnv } from '../core/fixtures/harness.ts'
import { createLogger } from '../log.ts'
import { serveAcpChannel } from './serve-acp-channel.ts'

let env: TestEnv
beforeEach(() => {
  env = testEnv('chimera-acp-channel-')
})
afterEach(async () => {
  await env.cleanup()
})

/** A source the test feeds message by message, ended by `end()`. */
function source() {
  const queue: unknown[] = []
  let wake: (() => void) | undefined
  let ended = false
  return {
    push(m: unknown) {
      queue.push(m)
      wake?.()
    },
    end() {
      ended = true
      wake?.()
    },
    messages: (async function* () {
      for (;;) {
        if (queue.length) yield queue.shift()
        else if (ended) return
        else await new Promise<void>((r) => (wake = r))
      }
    })(),
  }
}

const logger = createLogger({ level: 'error', name: 'test' })
type Msg = { id?: number; method?: string; result?: Record<string, unknown>; params?: unknown }

describe('serveAcpChannel', () => {
  it('serves a connection over parsed messages, in order, until the source ends', async () => {
    const src = source()
    const out: Msg[] = []
    let got: (() => void) | undefined
    const send = async (m: unknown) => {
      out.push(m as Msg)
      got?.()
    }
    const answer = async (id: number) => {
      while (!out.some((m) => m.id === id)) await new Promise<void>((r) => (got = r))
      return out.find((m) => m.id === id)!
    }
    const manager = env.manager({ approval: 'ask' })
    const done = serveAcpChannel(
      { messages: src.messages, send },
      { agent: 'otter', version: '0.0.0', logger, manager, detach: true },
    )
    src.push({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })
    expect((await answer(1)).result).toMatchObject({ protocolVersion: 1 })
    src.push({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: env.cwd, mcpServers: [] } })
    const sessionId = (await answer(2)).result!.sessionId as string
    src.push({
      jsonrpc: '2.0',
      id: 3,
      method: 'session/prompt',
      params: { sessionId, prompt: [{ type: 'text', text: '!call Write {"path":"a.txt","content":"x"}' }] },
    })
    while (!out.some((m) => m.method === 'session/request_permission')) await new Promise<void>((r) => (got = r))
    // The client goes away without answering: detached, the request stays pending for another client.
    src.end()
    await done
    const session = manager.peek(sessionId)!
    expect(session.pendingPermissions()).toHaveLength(1)
    session.replyPermission(session.pendingPermissions()[0]!, 'deny', 'test')
    await session.idle()
  })

  it('ends the connection when the sink fails', async () => {
    const src = source()
    let sent = 0
    const done = serveAcpChannel(
      {
        messages: src.messages,
        send: async () => {
          sent++
          throw new Error('the client is gone')
        },
      },
      { agent: 'otter', version: '0.0.0', logger, manager: env.manager(), detach: true },
    )
    src.push({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })
    // The source is never ended: the failed sink alone ends the connection.
    await done
    expect(sent).toBe(1)
  })
})
