/**
 * File-change tracking of one session (the `ToolContext.files` every file-changing tool calls):
 * before a tool touches a file the tracker keeps its prior content and lets the undo history
 * (when the session has one) capture it; after the change it emits a `file_edit` event with a
 * unified diff (jsdiff) of what the tool did, and remembers the file as changed by this turn.
 */
import { readFile, stat } from 'node:fs/promises'
import { relative, sep } from 'node:path'
import type { FileChangeTracker } from '../tools/types.ts'
import type { FileHistory } from './file-history.ts'

/** Files larger than this (either side) get a one-line diff instead of a textual one. */
export const MAX_DIFF_BYTES = 1024 * 1024

type Content = Buffer | null

async function readOrNull(abs: string): Promise<Content> {
  try {
    const st = await stat(abs)
    if (!st.isFile()) return null
    if (st.size > MAX_DIFF_BYTES) return Buffer.alloc(0, 0)
    return await readFile(abs)
  } catch {
    return null
  }
}

const isText = (b: Content): boolean => b === null || (b.length <= MAX_DIFF_BYTES && !b.subarray(0, 8192).includes(0))

/** A unified diff of `before` → `after` of the file shown as `name` (the diff library loads with the first). */
export async function unifiedDiff(name: string, before: Content, after: Content): Promise<string> {
  if (!isText(before) || !isText(after)) return `Binary or large file ${name} changed\n`
  const { createTwoFilesPatch } = await import('diff')
  return createTwoFilesPatch(
    before === null ? '/dev/null' : `a/${name}`,
    after === null ? '/dev/null' : `b/${name}`,
    before?.toString('utf8') ?? '',
    after?.toString('utf8') ?? '',
    undefined,
    undefined,
    { context: 3 },
  )
}

export class FileTracker implements FileChangeTracker {
  readonly #cwd: string
  readonly #history: FileHistory | undefined
  readonly #emit: (path: string, diff: string) => void
  /** Content of each file before its latest change (for the next diff). */
  readonly #last = new Map<string, Content>()
  readonly #changed = new Set<string>()

  constructor(o: { cwd: string; history?: FileHistory; emit(path: string, diff: string): void }) {
    this.#cwd = o.cwd
    this.#history = o.history
    this.#emit = o.emit
  }

  async willChange(abs: string): Promise<void> {
    try {
      this.#last.set(abs, await readOrNull(abs))
      await this.#history?.willChange(abs)
    } catch {
      // Tracking never fails a tool call.
    }
  }

  async changed(abs: string): Promise<void> {
    try {
      const before = this.#last.get(abs) ?? null
      const after = await readOrNull(abs)
      this.#last.delete(abs)
      this.#changed.add(abs)
      const rel = relative(this.#cwd, abs)
      const name = (rel === '' || rel.startsWith('..') ? abs : rel).split(sep).join('/')
      if (before !== null && after !== null && before.equals(after)) return
      this.#emit(name, await unifiedDiff(name, before, after))
    } catch {
      // Tracking never fails a tool call.
    }
  }

  /** The files changed since the last call (the turn that just ended). */
  takeChanged(): string[] {
    const out = [...this.#changed]
    this.#changed.clear()
    this.#last.clear()
    return out
  }
}
