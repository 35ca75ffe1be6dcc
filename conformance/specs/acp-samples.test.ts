/**
 * Real ACP v1 messages (the ACP v1 protocol (docs/zed.md) A, the captured SDK 2.4.0 wire, and the §6 / §14
 * shapes) must pass both our generated validators (`acpV1Methods[method].params|result`) and the
 * official schema (the vendored `schema.v1.json`, compiled with Ajv 2020). Known-bad messages
 * must be rejected by both.
 *
 * Ajv set-up: `strict: false` (the schema carries `x-method`, `x-side`, `discriminator`), the
 * standard formats from ajv-formats (`uri`, `int32`, `int64`, `double`), and the schema's
 * unsigned-integer formats (`uint16`, `uint32`, `uint64`, which no format package defines)
 * registered here as integer ranges, so format validation stays on.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import Ajv2020Module from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { ValidateFunction } from 'ajv'
import { acpV1Methods } from '../../generated/acp/v1-methods.gen.ts'
import { abs } from '../../specs/codegen/lib/files.ts'

// ajv and ajv-formats are CommonJS: under NodeNext the default import is `module.exports`,
// which is the class / plugin itself and also carries it as `.default` (the typed path).
const Ajv2020 = Ajv2020Module.default
const addFormats = addFormatsModule.default

const VENDOR_KEY = 'acp-schema-v1'
const vendored = JSON.parse(readFileSync(abs('specs/vendor/acp/schema.v1.json'), 'utf8'))
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
const uint = (max: number) => ({
  type: 'number' as const,
  validate: (n: number) => Number.isInteger(n) && n >= 0 && n <= max,
})
ajv.addFormat('uint16', uint(0xffff))
ajv.addFormat('uint32', uint(0xffffffff))
ajv.addFormat('uint64', uint(Number.MAX_SAFE_INTEGER))
ajv.addSchema(vendored, VENDOR_KEY)

const compiled = new Map<string, ValidateFunction>()
/** The official-schema validator for `$defs/<name>`. */
function official(name: string): ValidateFunction {
  if (!(name in vendored.$defs)) throw new Error(`no $defs/${name} in the vendored schema`)
  const cached = compiled.get(name)
  if (cached) return cached
  const v = ajv.compile({ $ref: `${VENDOR_KEY}#/$defs/${name}` })
  compiled.set(name, v)
  return v
}

type Part = 'params' | 'result'
interface Sample {
  /** What the message is. */
  name: string
  method: keyof typeof acpV1Methods
  part: Part
  /** The official `$defs` type of this params / result object. */
  def: string
  value: unknown
}

/** Our generated validator for a method's params or result. */
function ours(
  method: keyof typeof acpV1Methods,
  part: Part,
): { safeParse(v: unknown): { success: boolean; error?: unknown } } {
  const v = acpV1Methods[method][part]
  if (!v) throw new Error(`${method} has no ${part} validator`)
  return v
}

const SID = '752d…'
const text = (t: string) => ({ type: 'text', text: t })
const update = (u: Record<string, unknown>) => ({ sessionId: SID, update: u })

// ---------------------------------------------------------------- valid samples
const VALID: Sample[] = [
  // Appendix A, verbatim
  {
    name: 'initialize request (Appendix A)',
    method: 'initialize',
    part: 'params',
    def: 'InitializeRequest',
    value: {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: 'tiny-client', version: '0' },
    },
  },
  {
    name: 'initialize response (Appendix A)',
    method: 'initialize',
    part: 'result',
    def: 'InitializeResponse',
    value: {
      protocolVersion: 1,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { embeddedContext: true },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      agentInfo: { name: 'tiny-agent', version: '0.0.1' },
      authMethods: [],
    },
  },
  {
    name: 'session/new request (Appendix A)',
    method: 'session/new',
    part: 'params',
    def: 'NewSessionRequest',
    value: { cwd: '/abs/run', mcpServers: [] },
  },
  {
    name: 'session/new response with modes + configOptions (Appendix A)',
    method: 'session/new',
    part: 'result',
    def: 'NewSessionResponse',
    value: {
      sessionId: SID,
      modes: {
        currentModeId: 'ask',
        availableModes: [
          { id: 'ask', name: 'Ask' },
          { id: 'code', name: 'Code' },
        ],
      },
      configOptions: [
        {
          id: 'model',
          name: 'Model',
          category: 'model',
          type: 'select',
          currentValue: 'm1',
          options: [
            { value: 'm1', name: 'M1' },
            { value: 'm2', name: 'M2' },
          ],
        },
      ],
    },
  },
  {
    name: 'session/prompt request (Appendix A)',
    method: 'session/prompt',
    part: 'params',
    def: 'PromptRequest',
    value: { sessionId: SID, prompt: [text('hi')] },
  },
  {
    name: 'session/update agent_message_chunk (Appendix A)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: text('hello ') }),
  },
  {
    name: 'session/update tool_call (Appendix A)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({
      sessionUpdate: 'tool_call',
      toolCallId: 't1',
      title: 'Edit file',
      kind: 'edit',
      status: 'pending',
      locations: [{ path: '/abs/x.txt' }],
      rawInput: { path: '/abs/x.txt' },
    }),
  },
  {
    name: 'session/request_permission request (Appendix A)',
    method: 'session/request_permission',
    part: 'params',
    def: 'RequestPermissionRequest',
    value: {
      sessionId: SID,
      toolCall: { toolCallId: 't1', title: 'Edit file' },
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
    },
  },
  {
    name: 'session/request_permission response, selected (Appendix A)',
    method: 'session/request_permission',
    part: 'result',
    def: 'RequestPermissionResponse',
    value: { outcome: { outcome: 'selected', optionId: 'allow' } },
  },
  {
    name: 'session/update tool_call_update with diff content (Appendix A)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({
      sessionUpdate: 'tool_call_update',
      toolCallId: 't1',
      status: 'completed',
      content: [{ type: 'diff', path: '/abs/x.txt', oldText: 'a', newText: 'b' }],
    }),
  },
  {
    name: 'session/update usage_update (Appendix A)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'usage_update', used: 1000, size: 200000, cost: { amount: 0.01, currency: 'USD' } }),
  },
  {
    name: 'session/prompt response (Appendix A)',
    method: 'session/prompt',
    part: 'result',
    def: 'PromptResponse',
    value: { stopReason: 'end_turn' },
  },
  {
    name: 'session/load request (Appendix A)',
    method: 'session/load',
    part: 'params',
    def: 'LoadSessionRequest',
    value: { sessionId: SID, cwd: '/abs/run', mcpServers: [] },
  },
  {
    name: 'session/update user_message_chunk replayed by load (Appendix A)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'user_message_chunk', content: text('old prompt') }),
  },
  {
    name: 'session/load response {} (Appendix A)',
    method: 'session/load',
    part: 'result',
    def: 'LoadSessionResponse',
    value: {},
  },
  // §6 / §10 / §14 shapes
  {
    name: 'initialize request as Zed sends it (§14)',
    method: 'initialize',
    part: 'params',
    def: 'InitializeRequest',
    value: {
      protocolVersion: 1,
      clientInfo: { name: 'zed', version: '0.200.0', title: 'Zed Stable' },
      clientCapabilities: {
        fs: { readTextFile: true, writeTextFile: true },
        terminal: true,
        auth: { terminal: true },
        session: { configOptions: { boolean: {} } },
        elicitation: { form: {}, url: {} },
        _meta: { terminal_output: true, 'terminal-auth': true },
      },
    },
  },
  {
    name: 'session/update agent_thought_chunk (§6)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'agent_thought_chunk', content: text('considering the edit') }),
  },
  {
    name: 'session/update plan (§6)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({
      sessionUpdate: 'plan',
      entries: [
        { content: 'Read the file', priority: 'high', status: 'completed' },
        { content: 'Edit it', priority: 'medium', status: 'in_progress' },
      ],
    }),
  },
  {
    name: 'session/update current_mode_update (§6, schema field currentModeId)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'current_mode_update', currentModeId: 'code' }),
  },
  {
    name: 'session/cancel notification (§6)',
    method: 'session/cancel',
    part: 'params',
    def: 'CancelNotification',
    value: { sessionId: SID },
  },
  {
    name: 'session/set_config_option request, model (§6, §17)',
    method: 'session/set_config_option',
    part: 'params',
    def: 'SetSessionConfigOptionRequest',
    value: { sessionId: SID, configId: 'model', value: 'm2' },
  },
  {
    name: 'session/set_config_option response, complete list (§6)',
    method: 'session/set_config_option',
    part: 'result',
    def: 'SetSessionConfigOptionResponse',
    value: {
      configOptions: [
        {
          id: 'model',
          name: 'Model',
          category: 'model',
          type: 'select',
          currentValue: 'm2',
          options: [
            { value: 'm1', name: 'M1' },
            { value: 'm2', name: 'M2' },
          ],
        },
      ],
    },
  },
  {
    name: '$/cancel_request notification (§6)',
    method: '$/cancel_request',
    part: 'params',
    def: 'CancelRequestNotification',
    value: { requestId: 0 },
  },
  {
    name: 'session/request_permission response, cancelled (§10)',
    method: 'session/request_permission',
    part: 'result',
    def: 'RequestPermissionResponse',
    value: { outcome: { outcome: 'cancelled' } },
  },
]

// ---------------------------------------------------------------- invalid samples
const INVALID: Sample[] = [
  {
    name: 'initialize with protocolVersion "1" (a string)',
    method: 'initialize',
    part: 'params',
    def: 'InitializeRequest',
    value: { protocolVersion: '1', clientCapabilities: {} },
  },
  {
    name: 'session/new without mcpServers',
    method: 'session/new',
    part: 'params',
    def: 'NewSessionRequest',
    value: { cwd: '/abs/run' },
  },
  {
    name: 'session/update of unknown kind tool_result (seed-only)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'tool_result', toolCallId: 't1', status: 'completed' }),
  },
  {
    name: 'session/update of kind permission_request (not an update in ACP v1)',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'permission_request', toolCallId: 't1' }),
  },
  {
    name: 'session/update agent_message_chunk with a string content',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'agent_message_chunk', content: 'hello' }),
  },
  {
    name: 'session/update usage_update without size',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'usage_update', used: 1000 }),
  },
  {
    name: 'session/update tool_call without title',
    method: 'session/update',
    part: 'params',
    def: 'SessionNotification',
    value: update({ sessionUpdate: 'tool_call', toolCallId: 't1' }),
  },
  {
    name: 'session/request_permission response {approved: true} (§18 client bug class)',
    method: 'session/request_permission',
    part: 'result',
    def: 'RequestPermissionResponse',
    value: { approved: true },
  },
  {
    name: 'session/prompt response with stopReason "error"',
    method: 'session/prompt',
    part: 'result',
    def: 'PromptResponse',
    value: { stopReason: 'error' },
  },
  {
    name: 'session/prompt with a plain-string prompt',
    method: 'session/prompt',
    part: 'params',
    def: 'PromptRequest',
    value: { sessionId: SID, prompt: 'hi' },
  },
]

describe('sample messages name the right official type', () => {
  it("every sample's $defs type carries the x-method of the sample's method", () => {
    const wrong = [...VALID, ...INVALID]
      .filter((s) => vendored.$defs[s.def]?.['x-method'] !== s.method)
      .map((s) => `${s.name}: ${s.def} is x-method ${vendored.$defs[s.def]?.['x-method']}`)
    expect(wrong).toEqual([])
  })
})

describe('valid ACP v1 messages pass our generated validators and the official schema', () => {
  for (const s of VALID) {
    it(s.name, () => {
      const mine = ours(s.method, s.part).safeParse(s.value)
      expect(mine.success, `generated ${s.method}.${s.part}: ${JSON.stringify(mine.error)}`).toBe(true)
      const v = official(s.def)
      expect(v(s.value), `official ${s.def}: ${ajv.errorsText(v.errors)}`).toBe(true)
    })
  }
})

describe('invalid ACP v1 messages are rejected by our generated validators and the official schema', () => {
  for (const s of INVALID) {
    it(s.name, () => {
      expect(ours(s.method, s.part).safeParse(s.value).success, `generated ${s.method}.${s.part} accepted it`).toBe(
        false,
      )
      expect(official(s.def)(s.value), `official ${s.def} accepted it`).toBe(false)
    })
  }
})

describe('the official-schema set-up keeps format validation on', () => {
  it('rejects a ToolCallLocation line beyond uint32 (a bound only the `format` carries)', () => {
    expect(vendored.$defs.ToolCallLocation.properties.line.maximum).toBeUndefined()
    expect(official('ToolCallLocation')({ path: '/abs/x.txt', line: 5 })).toBe(true)
    expect(official('ToolCallLocation')({ path: '/abs/x.txt', line: 2 ** 32 })).toBe(false)
  })
})
