/** The kit's command-line flags (shared by `chimera conformance` and bin/chimera-conformance.mjs). */
import type { ArgsDef } from 'citty'

export const KIT_ARGS = {
  command: {
    type: 'positional',
    required: false,
    description:
      '`mutants`: run the mutant set (each deliberately broken target must fail its named requirement, its control must pass) and print the table',
  },
  acp: { type: 'string', description: 'ACP agent command line to spawn (run by /bin/sh), e.g. "opencode acp"' },
  'acp-dialect': {
    type: 'enum',
    options: ['v1', 'otter', 'ferret'],
    default: 'v1',
    description: 'ACP dialect the agent speaks: v1 (the ACP v1 wire), otter or ferret (the seed dialects)',
  },
  'acp-http': {
    type: 'string',
    description:
      'URL of a running ACP agent over Streamable HTTP (the ACP v1 requirements, spoken through the official SDK), e.g. http://127.0.0.1:5173/acp',
  },
  'acp-ws': {
    type: 'string',
    description: 'URL of a running ACP agent over WebSocket (the ACP v1 requirements), e.g. ws://127.0.0.1:5173/acp',
  },
  http: { type: 'string', description: 'Base URL of a running HTTP+SSE server, e.g. http://127.0.0.1:5173' },
  token: {
    type: 'string',
    description: 'Bearer token for the server given by --http, --acp-http or --acp-ws (its master token)',
  },
  rpc: { type: 'string', description: 'JSON-lines RPC command line to spawn (run by /bin/sh)' },
  profile: {
    type: 'string',
    description: 'Target profile: a JSON/YAML file, or the name of a shipped one (chimera, opencode, codex-acp)',
  },
  transport: {
    type: 'string',
    description:
      "Only these of the profile's transports (comma-separated: acp-v1,acp-http,acp-ws,acp-otter,acp-ferret,http,rpc)",
  },
  'model-double': {
    type: 'boolean',
    description:
      'Start the model double and pass CHIMERA_CONFORMANCE_MODEL_URL / _MODEL / _KEY to --acp/--rpc commands',
  },
  list: { type: 'boolean', description: 'List the requirements (id, transports, level, title) and exit' },
  only: {
    type: 'string',
    description: 'Only requirements whose id matches this glob (repeatable; * within a word run, ** across dots)',
  },
  'expected-failures': {
    type: 'string',
    description:
      'JSON/YAML list of known failures: reported as expected; a listed one that passes fails the run as stale',
  },
  junit: {
    type: 'string',
    description:
      'Write a JUnit XML report to this file (expected failures are passing testcases marked chimera.status=xfail)',
  },
  json: {
    type: 'string',
    description: 'Write a JSON report to this file (with the kit, corpus and implementation versions)',
  },
  html: {
    type: 'string',
    description:
      'Write a self-contained HTML report to this file (per requirement: transports, verdict, the frames of a failure)',
  },
  'fail-on': {
    type: 'enum',
    options: ['must', 'should', 'may'],
    default: 'must',
    description:
      'Lowest level whose failures fail the run: must (default; SHOULD and MAY failures are reported only), should, or may',
  },
  ports: {
    type: 'string',
    description: 'Port range FROM-TO for the HTTP servers and the model double the kit starts (default: any free port)',
  },
  'startup-grace': {
    type: 'string',
    default: '30000',
    description: 'Extra milliseconds a freshly started target may take for its first answer (on top of --timeout)',
  },
  corpus: { type: 'string', description: 'An extra directory of scenarios and transcripts (repeatable)' },
  coverage: {
    type: 'boolean',
    description: 'Print the spec items (methods, routes, events, error codes) no selected requirement touches',
  },
  timeout: {
    type: 'string',
    default: '10000',
    description:
      'Milliseconds every step waits for the implementation (a transcript step asking for longer gets longer)',
  },
  verbose: {
    type: 'boolean',
    description: 'Show the last frames and stderr lines under each failure and expected failure',
  },
} as const satisfies ArgsDef
