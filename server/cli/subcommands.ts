/**
 * The `chimera` subcommands: each one's one-line description and how to load it. `chimera --help`
 * lists the descriptions without loading any command (loading all six would put the transports,
 * the validators and the conformance kit on the path of the help text); a test checks each
 * description against the loaded command's own.
 */
import type { ArgsDef, CommandDef } from 'citty'

type Loader = () => Promise<CommandDef<ArgsDef>>

export const SUBCOMMANDS: Record<string, { description: string; load: Loader }> = {
  otter: {
    description: 'The otter agent: HTTP + SSE server and ACP agent, persisted sessions and sharing',
    load: () => import('./otter.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  ferret: {
    description: 'The ferret IDE bridge: ACP agent for Zed and other editors',
    load: () => import('./ferret.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  relay: {
    description: "The cloud bridge's relay: editors' ferret dials out to it, remote ACP clients reach their sessions",
    load: () => import('./relay.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  code: {
    description: 'Drive an agent session headlessly (--mode rpc: JSON lines on stdin/stdout)',
    load: () => import('./code.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  mink: {
    description: 'The mink runner: rollups of persisted runs',
    load: () => import('./mink.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  // The conformance kit's model double and runner (the two places the CLI reaches into conformance/).
  'model-double': {
    description:
      "Serve the conformance model double: a model server (OpenAI chat completions and Responses, Anthropic Messages, Gemini generateContent) that plays the offline model's directives",
    load: () => import('../../conformance/model-double/command.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
  // The conformance kit's runner (also its own bin, bin/chimera-conformance.mjs).
  conformance: {
    description: 'Run the conformance kit against an ACP agent, an HTTP+SSE server or a JSON-lines RPC process',
    load: () => import('../../conformance/kit/cli/command.ts').then((m) => m.default as CommandDef<ArgsDef>),
  },
}

/** The subcommands as citty loads them. */
export const subCommandLoaders = (): Record<string, Loader> =>
  Object.fromEntries(Object.entries(SUBCOMMANDS).map(([name, s]) => [name, s.load]))

/** The subcommands as `chimera --help` lists them: name and description, nothing loaded. */
export const subCommandStubs = (): Record<string, CommandDef<ArgsDef>> =>
  Object.fromEntries(
    Object.entries(SUBCOMMANDS).map(([name, s]) => [name, { meta: { name, description: s.description } }]),
  )
