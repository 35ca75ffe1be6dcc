/**
 * `chimera model-double [--port N] [--host H]`: serve the model double until SIGINT/SIGTERM.
 * Its URL goes to stderr (stdout stays clean, as on every Chimera command that is not help).
 */
import { defineCommand } from 'citty'
import { parsePort } from '../../server/cli/args.ts'
import { DOUBLE_MODEL, startModelDouble } from './server.ts'

export default defineCommand({
  meta: { name: 'model-double', description: 'Serve the conformance model double: a model server (OpenAI chat completions and Responses, Anthropic Messages, Gemini generateContent) that plays the offline model\'s directives' },
  args: {
    port: { type: 'string', description: 'Port (0: any free port)', default: '0' },
    host: { type: 'string', description: 'Bind address', default: '127.0.0.1' },
  },
  async run({ args }) {
    const port = parsePort(args.port, 0)
    const double = await startModelDouble({ host: args.host, port })
    process.stderr.write(`model double serving ${DOUBLE_MODEL} at ${double.url} (CHIMERA_OPENAI_BASE_URL=${double.url} --model openai-compatible/${DOUBLE_MODEL}; ` +
      `Anthropic and Gemini clients: ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL=${double.origin})\n`)
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
