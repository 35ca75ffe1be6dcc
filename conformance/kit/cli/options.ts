/** The kit's command-line flags (shared by `chimera conformance` and bin/chimera-conformance.mjs). */
import type { ArgsDef } from 'citty'

export const KIT_ARGS = {
  acp: { type: 'string', description: 'ACP agent command line to spawn (run by /bin/sh), e.g. "opencode acp"' },
  'acp-dialect': { type: 'enum', options: ['v1', 'otter', 'ferret'], default: 'v1', description: 'ACP dialect the agent speaks: v1 (the ACP v1 wire), otter or ferret (the seed dialects)' },
  http: { type: 'string', description: 'Base URL of a running HTTP+SSE server, e.g. http://127.0.0.1:5173' },
  token: { type: 'string', description: "The HTTP server's master bearer token" },
  rpc: { type: 'string', description: 'JSON-lines RPC command line to spawn (run by /bin/sh)' },
  profile: { type: 'string', description: 'Target profile: a JSON/YAML file, or the name of a shipped one (chimera, opencode, codex-acp)' },
  transport: { type: 'string', description: "Only these of the profile's transports (comma-separated: acp-v1,acp-otter,acp-ferret,http,rpc)" },
  'model-double': { type: 'boolean', description: 'Start the model double and pass CHIMERA_CONFORMANCE_MODEL_URL / _MODEL / _KEY to --acp/--rpc commands' },
  list: { type: 'boolean', description: 'List the requirements (id, transports, level, title) and exit' },
  only: { type: 'string', description: 'Only requirements whose id matches this glob (repeatable; * within a word run, ** across dots)' },
  'expected-failures': { type: 'string', description: 'JSON/YAML list of known failures: reported as expected; a listed one that passes fails the run as stale' },
  junit: { type: 'string', description: 'Write a JUnit XML report to this file' },
  json: { type: 'string', description: 'Write a JSON report to this file' },
  corpus: { type: 'string', description: 'An extra directory of scenarios and transcripts (repeatable)' },
  coverage: { type: 'boolean', description: 'Print the spec items (methods, routes, events, error codes) no selected requirement touches' },
  timeout: { type: 'string', default: '10000', description: 'Milliseconds a step waits for the implementation' },
  verbose: { type: 'boolean', description: 'Show the last frames and stderr lines under each failure' },
} as const satisfies ArgsDef
