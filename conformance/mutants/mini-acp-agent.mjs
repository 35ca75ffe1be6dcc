#!/usr/bin/env node
// A minimal ACP v1 agent over stdio, written for the kit's self-test: it plays the model
// double's directive lines itself (`!say text`, `!think text`, `!sleep ms`, `!call Read {"path"}`,
// one per line) with no model, answers initialize / session/new / session/prompt /
// session/cancel as the ACP v1 protocol (docs/zed.md) says (a Read call is announced with tool_call, runs
// in_progress, reads the file from the session's cwd and completes with its text, then the
// agent says `Read ok: <first line>`), and with `--fault <name>` breaks exactly one rule:
//   reply-before-updates  answers session/prompt before sending the turn's updates
//   non-v1-update         sends a seed-dialect `textDelta` update to a v1 client
//   update-before-call    sends a call's first tool_call_update before its tool_call
//   status-backwards      reports a completed call as in_progress again
// Without --fault it is the control: the same scenarios must pass against it.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createInterface } from 'node:readline'

const i = process.argv.indexOf('--fault')
const fault = i >= 0 ? process.argv[i + 1] : undefined
const send = (m) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`)
const sessions = new Map() // sessionId → { cancel?: () => void }
let n = 0

const update = (sessionId, kind, text) => {
  if (kind === 'agent_message_chunk' && fault === 'non-v1-update')
    return send({
      method: 'session/update',
      params: { sessionId, update: { sessionUpdate: 'textDelta', delta: text } },
    })
  send({
    method: 'session/update',
    params: { sessionId, update: { sessionUpdate: kind, content: { type: 'text', text } } },
  })
}

/** `Read {"path": …}`: announce, run, complete (the faults break the order here), then say what was read. */
function toolCall(sessionId, cwd, arg) {
  const m = /^(\S+) (.*)$/.exec(arg)
  const toolCallId = `call-${++n}`
  const tc = (update) => send({ method: 'session/update', params: { sessionId, update: { toolCallId, ...update } } })
  const args = m ? JSON.parse(m[2]) : {}
  const announce = () =>
    tc({ sessionUpdate: 'tool_call', title: m?.[1] ?? 'Read', kind: 'read', status: 'pending', rawInput: args })
  const running = () => tc({ sessionUpdate: 'tool_call_update', status: 'in_progress' })
  if (fault === 'update-before-call') {
    running()
    announce()
  } else {
    announce()
    running()
  }
  let text
  let ok = true
  try {
    text = readFileSync(resolve(cwd, String(args.path ?? '')), 'utf8')
  } catch (e) {
    text = String(e.message)
    ok = false
  }
  tc({
    sessionUpdate: 'tool_call_update',
    status: ok ? 'completed' : 'failed',
    content: [{ type: 'content', content: { type: 'text', text } }],
  })
  if (fault === 'status-backwards') running()
  update(sessionId, 'agent_message_chunk', `${m?.[1] ?? 'Read'} ${ok ? 'ok' : 'failed'}: ${text.split('\n')[0]}`)
}

async function prompt(id, params) {
  const s = sessions.get(params?.sessionId)
  if (!s) return send({ id, error: { code: -32602, message: 'Invalid params', data: { detail: 'unknown sessionId' } } })
  const text = (params.prompt ?? [])
    .filter((b) => b?.type === 'text')
    .map((b) => b.text)
    .join('\n')
  const steps = []
  for (const line of text.split('\n')) {
    const m = /^!(say|think|sleep|call) ?(.*)$/.exec(line)
    if (m) steps.push([m[1], m[2]])
  }
  if (!steps.length) steps.push(['say', 'ok'])
  let cancelled = false
  let said = 0 // consecutive `say` lines are joined with a newline, as the model double does
  if (fault === 'reply-before-updates') send({ id, result: { stopReason: 'end_turn' } })
  for (const [k, arg] of steps) {
    if (k === 'say') update(params.sessionId, 'agent_message_chunk', said++ ? `\n${arg}` : arg)
    else if (k === 'call') toolCall(params.sessionId, s.cwd, arg)
    else if (k === 'think') update(params.sessionId, 'agent_thought_chunk', arg)
    else {
      cancelled = await new Promise((res) => {
        const t = setTimeout(() => res(false), Number(arg) || 0)
        s.cancel = () => {
          clearTimeout(t)
          res(true)
        }
      })
      s.cancel = undefined
      if (cancelled) break
    }
  }
  if (fault !== 'reply-before-updates') send({ id, result: { stopReason: cancelled ? 'cancelled' : 'end_turn' } })
}

createInterface({ input: process.stdin, crlfDelay: Infinity }).on('line', (line) => {
  if (!line.trim()) return
  let m
  try {
    m = JSON.parse(line)
  } catch {
    return send({ id: null, error: { code: -32700, message: 'Parse error' } })
  }
  const { id, method, params } = m
  if (method === 'initialize')
    return send({ id, result: { protocolVersion: 1, agentCapabilities: { loadSession: false }, authMethods: [] } })
  if (method === 'session/new') {
    const sessionId = `mini-${++n}`
    sessions.set(sessionId, { cwd: params?.cwd ?? process.cwd() })
    return send({ id, result: { sessionId } })
  }
  if (method === 'session/prompt') return void prompt(id, params)
  if (method === 'session/cancel') return void sessions.get(params?.sessionId)?.cancel?.()
  if (id !== undefined && method !== undefined)
    send({ id, error: { code: -32601, message: 'Method not found', data: { method } } })
})
