/**
 * Spec items a black-box client cannot make a target produce with any valid request or setup
 * the kit can give it, each with the reason. The coverage report lists them apart from the
 * untouched items and never counts them as covered; an entry that a requirement does touch, or
 * that names no spec item, fails the kit's tests, so the list only shrinks.
 */
// The SSE events and canonical event types are measured on the HTTP wire, the one that shows
// canonical events as they are.
const viaOtherWires = (what: string, where: string): string =>
  `no HTTP route ${what}, so no HTTP client can make this event appear (${where}: those wires answer in their own terms, and the kit gives each transport a home of its own, so an HTTP target never shows a session another wire changed)`

const MODEL = viaOtherWires("changes a session's model", 'RPC set_model and ACP session/set_model make the change')
const MODE = viaOtherWires("changes a session's mode", 'ACP session/set_mode makes the change')
const APPROVAL = viaOtherWires(
  "changes a session's approval policy",
  "the ferret dialect's _ferret/session/setApproval makes the change",
)
const STEERING = viaOtherWires('steers a running turn', 'ACP _session/steering and RPC steer steer a turn')

export const UNREACHABLE: Readonly<Record<string, string>> = {
  'http error internal_error':
    'the masked answer to an unexpected failure inside the server (a bug): no valid request or setup provokes one from a correct server',
  'http error transcript_failed':
    'listed in ErrorCode, but no operation of the OpenAPI document answers it and Chimera never sends it',
  'http error service_unavailable':
    'listed in ErrorCode, but no operation of the OpenAPI document answers it and Chimera never sends it',
  'http error storage_full':
    "answered when the server's event log refuses a write (a full disk, a read-only home): a black-box client cannot fill the target's disk",
  'http error command_invoke_failed':
    'answered when the renderer or the submit raises: the renderer raises only on non-string arguments, which the request schema refuses first (400 invalid_body, http.errors.guards), and submitting to a live session does not raise',
  'sse event sessionsEvents.model_changed': MODEL,
  'sse event sessionsEvents.mode_changed': MODE,
  'sse event sessionsEvents.approval_changed': APPROVAL,
  'sse event sessionsEvents.steering': STEERING,
  'event type model_changed': MODEL,
  'event type mode_changed': MODE,
  'event type approval_changed': APPROVAL,
  'event type steering': STEERING,
  'acp.seed error -32603':
    'an internal error (a bug) on the seed wire: no valid request or setup provokes one from a correct agent, and the seed documents answer internal failures as -32000 {name, message} (decision 0003)',
}
