/**
 * `chimera model-double [--port N] [--host H] [--api-key K]`: serve the model double until
 * SIGINT/SIGTERM. Its URL goes to stderr (stdout stays clean, as on every Chimera command that is
 * not help). Bound to anything but loopback it is reachable from other machines, so it requires a
 * key there (`--api-key`, or `CHIMERA_MODEL_DOUBLE_API_KEY`; requests then need
 * `Authorization: Bearer <key>`) and refuses to start without one.
 */
import { defineCommand } from 'citty'
import { parsePort, UsageError } from '../../server/cli/args.ts'
import { isLoopbackName } from '../../server/http/host-names.ts'
import { DOUBLE_MODEL, startModelDouble } from './server.ts'

export default defineCommand({
  meta: {
    name: 'model-double',
    description:
      "Serve the conformance model double: a model server (OpenAI chat completions and Responses, Anthropic Messages, Gemini generateContent) that plays the offline model's directives",
  },
  args: {
    port: { type: 'string', description: 'Port (0: any free port)', default: '0' },
    host: {
      type: 'string',
      description: 'Bind address; anything but loopback requires --api-key (no auth otherwise)',
      default: '127.0.0.1',
    },
    'api-key': {
      type: 'string',
      description:
        'Require `Authorization: Bearer <key>` on every request (default $CHIMERA_MODEL_DOUBLE_API_KEY); required off loopback',
    },
  },
  async run({ args }) {
    const port = parsePort(args.port, 0)
    const key = (args['api-key'] as string | undefined) || process.env.CHIMERA_MODEL_DOUBLE_API_KEY || undefined
    if (!isLoopbackName(args.host) && key === undefined) {
      throw new UsageError(
        `model-double: --host ${args.host} is reachable from other machines and the double has no authentication; give --api-key (or CHIMERA_MODEL_DOUBLE_API_KEY), or bind to 127.0.0.1`,
      )
    }
    const double = await startModelDouble({ host: args.host, port, ...(key !== undefined ? { apiKey: key } : {}) })
    process.stderr.write(
      `model double serving ${DOUBLE_MODEL} at ${double.url} (CHIMERA_OPENAI_BASE_URL=${double.url} --model openai-compatible/${DOUBLE_MODEL}; ` +
        `Anthropic and Gemini clients: ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL=${double.origin})${key !== undefined ? ' — requests need the API key' : ''}\n`,
    )
    await new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        resolve()
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
    })
    await double.close()
  },
})
