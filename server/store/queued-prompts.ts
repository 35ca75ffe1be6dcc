/**
 * Queued prompts on disk (EventStore.queuePrompt): one `queued-<message_id>.json` per prompt in
 * the session directory, created exclusively (fsynced when the store fsyncs) before the prompt is
 * acknowledged and removed once its turn's `user_message` is in the log. The name does not start
 * with `event-`, so the log scan, the segment and every reader of the event files ignore it.
 * A file that is torn or not a prompt (a crash mid-write: that prompt was never acknowledged) is
 * removed when the session is opened.
 */
import { readdir, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { Logger } from '../log.ts'
import { errCode, readJsonFile, writeExclusive } from './file-log.ts'
import type { QueuedPrompt } from './types.ts'

const PREFIX = 'queued-'
/** Message ids the core makes (`msg-<uuid>`) and anything else file-name safe. */
const MESSAGE_ID = /^[A-Za-z0-9_-]{1,128}$/

function fileOf(dir: string, messageId: string): string {
  if (!MESSAGE_ID.test(messageId))
    throw new RangeError(`message id ${JSON.stringify(messageId.slice(0, 80))} cannot name a queue entry`)
  return join(dir, `${PREFIX}${messageId}.json`)
}

export function sortQueued(list: QueuedPrompt[]): QueuedPrompt[] {
  return list.sort((a, b) => a.accepted_at - b.accepted_at || a.order - b.order)
}

export async function writeQueued(dir: string, p: QueuedPrompt, fsync: boolean): Promise<void> {
  await writeExclusive(fileOf(dir, p.message_id), `${JSON.stringify(p)}\n`, fsync)
}

export async function removeQueued(dir: string, messageId: string): Promise<void> {
  await unlink(fileOf(dir, messageId)).catch((err: unknown) => {
    if (errCode(err) !== 'ENOENT') throw err
  })
}

function isQueuedPrompt(v: unknown): v is QueuedPrompt {
  if (typeof v !== 'object' || v === null) return false
  const p = v as Record<string, unknown>
  const c = p.command as Record<string, unknown> | undefined
  return (
    typeof p.message_id === 'string' &&
    MESSAGE_ID.test(p.message_id) &&
    typeof p.text === 'string' &&
    typeof p.accepted_at === 'number' &&
    typeof p.order === 'number' &&
    (c === undefined ||
      (typeof c === 'object' && c !== null && typeof c.name === 'string' && typeof c.arguments === 'string'))
  )
}

/** True when `listing` (a session directory's entries) has queued prompts. */
export function hasQueued(listing: readonly string[]): boolean {
  return listing.some((n) => n.startsWith(PREFIX) && n.endsWith('.json'))
}

/**
 * The session's queued prompts in queue order; unreadable entries are removed (logged).
 * `listing`: the directory's entries when the caller has just read them.
 */
export async function readQueued(
  dir: string,
  sessionId: string,
  logger: Logger,
  listing?: readonly string[],
): Promise<QueuedPrompt[]> {
  const names = (listing ?? (await readdir(dir))).filter((n) => n.startsWith(PREFIX) && n.endsWith('.json'))
  const out: QueuedPrompt[] = []
  for (const name of names) {
    const r = await readJsonFile(join(dir, name))
    const id = name.slice(PREFIX.length, -'.json'.length)
    if (r.kind === 'ok' && isQueuedPrompt(r.value) && r.value.message_id === id) {
      out.push(r.value)
      continue
    }
    if (r.kind === 'missing') continue
    logger.warn('event log: unreadable queue entry removed (a prompt cut off before it was acknowledged)', {
      session_id: sessionId,
      file: name,
    })
    await unlink(join(dir, name)).catch(() => {})
  }
  return sortQueued(out)
}
