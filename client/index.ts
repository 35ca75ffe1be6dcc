/**
 * Chimera's client SDK (`@chimera-agent/client`): browser-safe — nothing here imports a Node module
 * (client/browser-safety.test.ts bundles this entry for the browser and fails on one). Node-only
 * parts (the JSON-lines RPC client, spawning agents) are in `@chimera-agent/client/node`; mock handlers
 * for tests in `@chimera-agent/client/msw`. The public API is exactly what this file exports.
 */
export {
  createChimeraClient,
  OPERATION_METHODS,
  type CallOptions,
  type ChimeraClient,
  type ChimeraClientOptions,
  type CommandInvokeAccepted,
  type CommandInvokeRequest,
  type CommandsListResponse,
  type HealthResponse,
  type InfoResponse,
  type MessageAccepted,
  type ProvidersResponse,
  type RunsCostResponse,
  type RunsListResponse,
  type RunsQuery,
  type SessionCreated,
  type SessionCreateRequest,
  type SessionDetail,
  type SessionMessageRequest,
  type SessionRunStarted,
  type SessionsCreateRequest,
  type SessionsListQuery,
  type SessionsListResponse,
  type SessionSnapshot,
  type SessionSummary,
  type ShareRequest,
  type ShareResult,
  type ToolApproveRequest,
  type ToolsResponse,
  type TranscriptJson,
  type UndoResult,
} from './api.ts'
export {
  answerPermission,
  continueSession,
  followTurn,
  renameSession,
  startSession,
  type AgentResultEvent,
  type FollowOptions,
  type PermissionRequestEvent,
  type TurnOutcome,
} from './helpers.ts'
export { ChimeraApiError, ChimeraClientError, type ClientErrorKind, type ErrorBody, type ErrorCode } from './errors.ts'
export {
  EventStream,
  type EventStreamOptions,
  type ReconnectOptions,
  type RetryInfo,
  type SseRecord,
  type StreamStats,
} from './events/event-stream.ts'
export {
  LoopEventStream,
  SessionEventStream,
  type LoopStreamEvent,
  type SessionStreamEvent,
  type SseEnd,
  type StreamOptions,
} from './events/session-events.ts'
export { createHttpClient, type HttpClient, type HttpClientOptions, type paths } from './http.ts'
export type {
  ChimeraEvent,
  EventDataByType,
  EventType,
  LoopEventEnvelope,
  PermissionDecision,
  SseEnvelope,
  Usage,
} from '../generated/schemas.gen.ts'
