/** The approval policies a session runs under (their meaning: permissions.ts, docs/core.md). */
export const APPROVAL_POLICIES = ['allow', 'deny', 'ask', 'auto', 'read-only'] as const
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number]
