/**
 * `chimera otter`: `serve` (the HTTP + SSE server, or ACP over stdio with `--acp`; docs/zed.md,
 * 001), `sessions list` / `sessions show <id>` (the data of `GET /sessions` and
 * `GET /sessions/{id}`, read from the event log without changing it) and `share <id>` (the
 * `POST /sessions/{id}/share` code path).
 */
import { defineCommand } from 'citty'
import { createLogger, levelFromEnv } from '../log.ts'
import { HTTP_ARGS, runServe, serveSessionArgs } from './serve-command.ts'
import { serveSubCommands } from './serve-subcommands.ts'

const serve = defineCommand({
  meta: { name: 'serve', description: 'Run otter as a headless HTTP + SSE server (or ACP over stdio with --acp)' },
  args: {
    ...HTTP_ARGS,
    acp: { type: 'boolean', description: 'Run the ACP JSON-RPC server on stdio instead of HTTP', default: false },
    ...serveSessionArgs(
      'ask',
      'a person answers each request (ACP permission_request → permission/respond, HTTP POST /tool/approve)',
    ),
  },
  subCommands: serveSubCommands('otter'),
  run: ({ args, rawArgs }) =>
    runServe(
      'otter',
      { acp: args.acp, http: !args.acp },
      args,
      rawArgs,
      createLogger({ level: levelFromEnv(), name: 'otter' }),
    ),
})

const list = defineCommand({
  meta: { name: 'list', description: 'List persisted sessions, newest first (as GET /sessions)' },
  args: {
    limit: { type: 'string', description: 'Maximum number of sessions', default: '20' },
    since: {
      type: 'string',
      description: 'Only sessions started after this: 7d, 24h, 30m, or an ISO-8601 date or date-time',
    },
    model: { type: 'string', description: 'Only sessions on exactly this model' },
    json: { type: 'boolean', description: 'Print {"sessions": [...]} as JSON', default: false },
  },
  run: async ({ args }) => (await import('./otter-sessions.ts')).listSessions(args),
})

const show = defineCommand({
  meta: { name: 'show', description: 'Show one session: its summary and every event (as GET /sessions/{id})' },
  args: {
    id: { type: 'positional', required: true, description: 'Session id (otter-<utc>-<uuid>, ferret-…, mink-…)' },
    json: { type: 'boolean', description: 'Print {"session_id", "summary", "events"} as JSON', default: false },
  },
  run: async ({ args }) => (await import('./otter-sessions.ts')).showSession(args),
})

const sessions = defineCommand({
  meta: { name: 'sessions', description: 'Persisted sessions: list, show' },
  subCommands: { list, show },
})

const share = defineCommand({
  meta: {
    name: 'share',
    description: 'Render a session as HTML, Markdown or JSON and send it to a sink (file, http, stdout)',
  },
  args: {
    id: { type: 'positional', required: true, description: 'Session id' },
    sink: {
      type: 'enum',
      options: ['file', 'http', 'stdout'],
      description:
        'file: under $CHIMERA_HOME/shares (prints the path); http: POST to --url; stdout: print the body (default: http when $OTTER_SHARE_URL is set, else file)',
    },
    format: { type: 'enum', options: ['html', 'md', 'json'], description: 'Rendering', default: 'html' },
    url: { type: 'string', description: 'Collector URL for the http sink (default: $OTTER_SHARE_URL)' },
    timeout: { type: 'string', description: 'Seconds to wait for the collector (http sink)', default: '10' },
  },
  run: async ({ args }) => (await import('./otter-sessions.ts')).shareSession(args),
})

export default defineCommand({
  meta: {
    name: 'otter',
    description: 'The otter agent: HTTP + SSE server and ACP agent, persisted sessions and sharing',
  },
  subCommands: { serve, sessions, share },
})
