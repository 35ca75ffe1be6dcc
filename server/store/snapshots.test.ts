/**
 * The snapshot store on its own: layout and deduplication, pre-images once per turn, undo and
 * redo of created / edited files, the redo branch and its orphaned blobs dropped by a new
 * commit, the 25 MiB rule, symbolic links and damaged records refused, a restart in the middle
 * of an operation, `align`, `clear`, and the snapshot root override.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { newSessionId } from './paths.ts'
import { MAX_SNAPSHOT_BYTES } from './snapshot-files.ts'
import { FileSnapshotStore, snapshotHistory, snapshotRoot } from './snapshots.ts'

let base: string
let ws: string
let root: string
let sid: string
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'chimera-snap-')))
  ws = join(base, 'ws')
  root = join(base, 'snapshots')
  mkdirSync(ws)
  sid = newSessionId('otter')
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const store = (maxFileBytes?: number) =>
  new FileSnapshotStore({ root, sessionId: sid, ...(maxFileBytes ? { maxFileBytes } : {}) })
const p = (rel: string) => join(ws, rel)
const read = (rel: string) => (existsSync(p(rel)) ? readFileSync(p(rel), 'utf8') : null)
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex')
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'))
const blobs = () => (existsSync(join(root, sid, 'blobs')) ? readdirSync(join(root, sid, 'blobs')).sort() : [])
const snaps = () => readdirSync(join(root, sid, 'snaps')).sort()

/** One "turn": tell the store, change the files, commit. */
async function turn(s: FileSnapshotStore, changes: Record<string, string>): Promise<void> {
  for (const rel of Object.keys(changes)) await s.willChange(p(rel))
  for (const [rel, content] of Object.entries(changes)) writeFileSync(p(rel), content)
  await s.commitTurn(Object.keys(changes).map(p))
}

describe('the snapshot store', () => {
  it('lays out blobs and manifests as docs/http.md describes, sharing identical content', async () => {
    const s = store()
    await turn(s, { 'a.txt': 'one', 'b.txt': 'one' })
    await turn(s, { 'a.txt': 'two' })
    await s.commitTurn([]) // a turn that changed nothing is still a turn
    expect(await s.counts()).toEqual({ undoable: 3, redoable: 0 })
    // The turn that changed nothing has no directory: state.json lists it as empty.
    expect(snaps()).toEqual(['snap-000001', 'snap-000002'])
    expect(await store().counts()).toEqual({ undoable: 3, redoable: 0 })
    // Both lists are runs of consecutive snap numbers (snap-000001 … snap-000003 is [1, 3]).
    expect(json(join(root, sid, 'state.json'))).toEqual({
      version: 2,
      next: 4,
      snaps: [[1, 3]],
      head: 3,
      empty: [[3, 3]],
    })
    const dir = join(root, sid, 'snaps')
    expect(json(join(dir, 'snap-000001', 'manifest.json'))).toEqual({
      [p('a.txt')]: sha('one'),
      [p('b.txt')]: sha('one'),
    })
    expect(json(join(dir, 'snap-000001', 'before.json'))).toEqual({ [p('a.txt')]: null, [p('b.txt')]: null })
    expect(json(join(dir, 'snap-000002', 'manifest.json'))).toEqual({ [p('a.txt')]: sha('two') })
    // "one" is stored once for two files and two turns.
    expect(blobs()).toEqual([sha('one'), sha('two')].sort())
    expect(readFileSync(join(root, sid, 'blobs', sha('two')), 'utf8')).toBe('two')
  })

  it('undoes and redoes across turns that changed nothing, also after a restart, and forgets them with the redo branch', async () => {
    const s = store()
    await turn(s, { 'a.txt': 'one' })
    await s.commitTurn([])
    await turn(s, { 'a.txt': 'two' })
    await s.commitTurn([])
    expect(snaps()).toEqual(['snap-000001', 'snap-000003'])
    expect(json(join(root, sid, 'state.json'))).toMatchObject({
      head: 4,
      empty: [
        [2, 2],
        [4, 4],
      ],
    })
    // Undo two turns (an empty one and the second edit) in a store opened afresh.
    const again = store()
    await again.align({ undoable: 4, redoable: 0, turns: 4 })
    expect(await again.counts()).toEqual({ undoable: 4, redoable: 0 })
    expect(await again.undo(2)).toMatchObject({ turns: 2, files: [p('a.txt')] })
    expect(read('a.txt')).toBe('one')
    // The empty turn displaced nothing and has no directory to record it in.
    expect(existsSync(join(root, sid, 'snaps', 'snap-000004'))).toBe(false)
    expect(await again.redo(1)).toMatchObject({ turns: 1, files: [p('a.txt')] })
    expect(read('a.txt')).toBe('two')
    // A new turn drops the redo branch (the empty turn 4) from the state.
    await again.commitTurn([])
    expect(json(join(root, sid, 'state.json'))).toMatchObject({
      snaps: [
        [1, 3],
        [5, 5],
      ],
      head: 4,
      empty: [
        [2, 2],
        [5, 5],
      ],
    })
    expect(await store().counts()).toEqual({ undoable: 4, redoable: 0 })
    expect(await store().undo(4)).toMatchObject({ turns: 4, files: [p('a.txt')] })
    expect(read('a.txt')).toBe(null)
  })

  it('does not make up turns for a history that was never written (a lost snapshot directory)', async () => {
    const s = store()
    await s.align({ undoable: 3, redoable: 0, turns: 3 })
    expect(await s.counts()).toEqual({ undoable: 0, redoable: 0 })
    expect(existsSync(join(root, sid, 'state.json'))).toBe(false)
  })

  it('keeps the first pre-image of a turn when a file is changed twice in it', async () => {
    writeFileSync(p('f'), 'orig')
    const s = store()
    await s.willChange(p('f'))
    writeFileSync(p('f'), 'mid')
    await s.willChange(p('f'))
    writeFileSync(p('f'), 'end')
    await s.commitTurn([p('f')])
    expect(await s.undo(1)).toMatchObject({ turns: 1, files: [p('f')] })
    expect(read('f')).toBe('orig')
  })

  it('undoes and redoes: created files deleted and recreated, edits reverted and replayed', async () => {
    const s = store()
    await turn(s, { 'a.txt': 'a1', 'b.txt': 'b1' })
    await turn(s, { 'a.txt': 'a2', 'c.txt': 'c1' })
    let r = await s.undo(1)
    expect(r.turns).toBe(1)
    expect(r.files.sort()).toEqual([p('a.txt'), p('c.txt')])
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['a1', 'b1', null])
    r = await s.undo(5) // at most what exists
    expect(r.turns).toBe(1)
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual([null, null, null])
    expect(await s.counts()).toEqual({ undoable: 0, redoable: 2 })
    expect(await s.undo(1)).toEqual({ turns: 0, files: [], skipped: [] })
    r = await s.redo(2)
    expect(r.turns).toBe(2)
    expect([read('a.txt'), read('b.txt'), read('c.txt')]).toEqual(['a2', 'b1', 'c1'])
    expect(await s.counts()).toEqual({ undoable: 2, redoable: 0 })
  })

  it('keeps the mode of a file it writes back', async () => {
    writeFileSync(p('run.sh'), '#!/bin/sh\n', { mode: 0o750 })
    const s = store()
    await turn(s, { 'run.sh': '#!/bin/sh\necho hi\n' })
    await s.undo(1)
    expect(read('run.sh')).toBe('#!/bin/sh\n')
    expect(statSync(p('run.sh')).mode & 0o777).toBe(0o750)
  })

  it('redo puts back what the undo displaced, so a later outside edit survives an undo/redo round', async () => {
    const s = store()
    await turn(s, { f: 'agent' })
    writeFileSync(p('f'), 'user edit')
    await s.undo(1)
    expect(read('f')).toBeNull()
    await s.redo(1)
    expect(read('f')).toBe('user edit')
  })

  it('a commit after an undo drops the redo branch and the blobs only it used', async () => {
    const s = store()
    await turn(s, { f: 'v1' })
    await turn(s, { f: 'v2-only-in-redo' })
    await s.undo(1)
    expect(blobs()).toContain(sha('v2-only-in-redo'))
    await turn(s, { g: 'new' })
    expect(await s.counts()).toEqual({ undoable: 2, redoable: 0 })
    expect(snaps()).toEqual(['snap-000001', 'snap-000003'])
    expect(blobs()).toEqual([sha('v1'), sha('new')].sort())
    expect(await s.redo(1)).toMatchObject({ turns: 0 })
    expect(read('f')).toBe('v1')
  })

  it('records files over 25 MiB as null and never touches them', async () => {
    const big = Buffer.alloc(MAX_SNAPSHOT_BYTES + 1, 0x61)
    writeFileSync(p('big.log'), big)
    const s = store()
    await s.willChange(p('big.log'))
    writeFileSync(p('big.log'), Buffer.concat([big, Buffer.from('more')]))
    await turn(s, { 'small.txt': 'x' })
    const dir = join(root, sid, 'snaps', 'snap-000001')
    expect(json(join(dir, 'before.json'))).toEqual({ [p('big.log')]: null, [p('small.txt')]: null })
    expect(json(join(dir, 'manifest.json'))).toEqual({ [p('big.log')]: null, [p('small.txt')]: sha('x') })
    expect(Object.keys(json(join(dir, 'meta.json')).unrecorded.after)).toEqual([p('big.log')])
    expect(blobs()).toEqual([sha('x')])
    const r = await s.undo(1)
    expect(r.files).toEqual([p('small.txt')])
    expect(r.skipped.map((x) => x.path)).toEqual([p('big.log')])
    expect(statSync(p('big.log')).size).toBe(big.length + 4)
  })

  it('does not delete a created file whose content it cannot record (the undo could not be redone)', async () => {
    const s = store(16)
    await turn(s, { 'out.txt': 'more than sixteen bytes of output' })
    const r = await s.undo(1)
    expect(r).toMatchObject({ turns: 1, files: [] })
    expect(r.skipped[0]!.why).toMatch(/cannot be recorded/)
    expect(read('out.txt')).toBe('more than sixteen bytes of output')
  })

  it('never writes through a symbolic link, nor into a directory reached through one', async () => {
    const outside = join(base, 'outside')
    mkdirSync(outside)
    mkdirSync(p('sub'))
    const s = store()
    await turn(s, { 'sub/f': 'v1' })
    await turn(s, { 'sub/f': 'v2', g: 'g1' })
    // Something replaces sub/ with a link out of the workspace, and g with a link to a file outside.
    rmSync(p('sub'), { recursive: true })
    symlinkSync(outside, p('sub'))
    writeFileSync(join(outside, 'victim'), 'keep')
    rmSync(p('g'))
    symlinkSync(join(outside, 'victim'), p('g'))
    const r = await s.undo(1)
    expect(r.files).toEqual([])
    expect(r.skipped.map((x) => x.path).sort()).toEqual([p('g'), p('sub/f')])
    expect(readdirSync(outside)).toEqual(['victim'])
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('keep')
  })

  it('refuses a damaged manifest or blob instead of restoring from it', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    await turn(s, { a: 'a2' })
    writeFileSync(join(root, sid, 'blobs', sha('a1')), 'tampered')
    const r = await s.undo(1)
    expect(r.files).toEqual([])
    expect(r.skipped[0]!.why).toMatch(/damaged/)
    expect(read('a')).toBe('a2')

    // A manifest naming a path the store never recorded, in a fresh process.
    const manifest = join(root, sid, 'snaps', 'snap-000001', 'before.json')
    writeFileSync(manifest, JSON.stringify({ '../../etc/passwd': null }))
    const again = store()
    const r2 = await again.undo(1)
    expect(r2).toMatchObject({ turns: 1, files: [] })
    expect(read('a')).toBe('a2')
  })

  it('keeps its position across a restart and finishes an operation the restart interrupted', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    await turn(s, { a: 'a2', b: 'b1' })
    await s.undo(1)
    const again = store()
    expect(await again.counts()).toEqual({ undoable: 1, redoable: 1 })
    await again.redo(1)
    expect([read('a'), read('b')]).toEqual(['a2', 'b1'])

    // A crash after the intent was saved and one file was rewound: the next open finishes it.
    const stateFile = join(root, sid, 'state.json')
    const st = json(stateFile)
    writeFileSync(stateFile, JSON.stringify({ ...st, op: { kind: 'undo', from: 2, to: 1, nonce: 'crashed' } }))
    writeFileSync(p('a'), 'a1')
    const third = store()
    expect(await third.counts()).toEqual({ undoable: 1, redoable: 1 })
    expect([read('a'), read('b')]).toEqual(['a1', null])
    expect(json(stateFile).op).toBeUndefined()
  })

  it('commits the pre-images of a turn a crash interrupted, and moves files back to the recorded position', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    await s.willChange(p('b'))
    writeFileSync(p('b'), 'b1') // the process dies before commitTurn
    const again = store()
    await again.align({ undoable: 2, redoable: 0, turns: 2 })
    expect(await again.counts()).toEqual({ undoable: 2, redoable: 0 })
    await again.undo(1)
    expect(read('b')).toBeNull()
    expect(read('a')).toBe('a1')

    // The files were rewound but the `undo` event never written: align replays them.
    const third = store()
    await third.align({ undoable: 2, redoable: 0, turns: 2 })
    expect(await third.counts()).toEqual({ undoable: 2, redoable: 0 })
    expect(read('b')).toBe('b1')
  })

  it('clear() removes the session store', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    expect(existsSync(join(root, sid))).toBe(true)
    await s.clear()
    expect(existsSync(join(root, sid))).toBe(false)
    expect(await s.counts()).toEqual({ undoable: 0, redoable: 0 })
    expect(read('a')).toBe('a1')
  })

  it('reads the state.json of an earlier release (every id listed) and writes runs from then on', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    await s.commitTurn([])
    await turn(s, { a: 'a2' })
    writeFileSync(
      join(root, sid, 'state.json'),
      JSON.stringify({
        version: 1,
        next: 4,
        snaps: ['snap-000001', 'snap-000002', 'snap-000003'],
        head: 3,
        empty: ['snap-000002'],
      }),
    )
    const again = store()
    expect(await again.counts()).toEqual({ undoable: 3, redoable: 0 })
    // The empty turn is known as such: undoing it writes nothing into a directory it does not have.
    expect(await again.undo(2)).toMatchObject({ turns: 2, files: [p('a')] })
    expect(read('a')).toBe('a1')
    expect(existsSync(join(root, sid, 'snaps', 'snap-000002'))).toBe(false)
    await again.commitTurn([])
    expect(json(join(root, sid, 'state.json'))).toEqual({
      version: 2,
      next: 5,
      head: 2,
      snaps: [
        [1, 1],
        [4, 4],
      ],
      empty: [[4, 4]],
    })
    expect(snaps()).toEqual(['snap-000001'])
  })

  it('a commit whose state write failed leaves nothing behind for the turn that takes its number', async () => {
    const s = store()
    await turn(s, { a: 'v1' })
    // The next turn changed a (reported as changed, no pre-image asked for) and its state write fails.
    writeFileSync(p('a'), 'v2')
    const stateFile = join(root, sid, 'state.json')
    rmSync(stateFile)
    mkdirSync(stateFile)
    await expect(s.commitTurn([p('a')])).rejects.toThrow()
    rmSync(stateFile, { recursive: true })
    // A turn that changed nothing takes the same number: undoing it touches no file.
    await s.commitTurn([])
    expect(await s.undo(1)).toMatchObject({ turns: 1, files: [] })
    expect(read('a')).toBe('v2')
  })

  it('sets a damaged state aside and starts afresh', async () => {
    const s = store()
    await turn(s, { a: 'a1' })
    writeFileSync(join(root, sid, 'state.json'), '{"version": 1, "head": "x"')
    const again = store()
    expect(await again.counts()).toEqual({ undoable: 0, redoable: 0 })
    expect(readdirSync(root).some((n) => n.startsWith(`${sid}.damaged-`))).toBe(true)
  })

  it('CHIMERA_SNAPSHOT_ROOT overrides <home>/snapshots; session ids are validated', async () => {
    expect(snapshotRoot('/h', {})).toBe('/h/snapshots')
    expect(snapshotRoot('/h', { CHIMERA_SNAPSHOT_ROOT: '/elsewhere/snaps' })).toBe('/elsewhere/snaps')
    const history = snapshotHistory({ home: join(base, 'home'), env: { CHIMERA_SNAPSHOT_ROOT: root } })
    const h = history({
      session_id: sid,
      agent: 'otter',
      cwd: ws,
      model: 'offline',
      mode: 'build',
      created_at: new Date().toISOString(),
    })
    await h.willChange(p('x'))
    writeFileSync(p('x'), '1')
    await h.commitTurn([p('x')])
    expect(existsSync(join(root, sid, 'snaps', 'snap-000001'))).toBe(true)
    expect(existsSync(join(base, 'home'))).toBe(false)
    expect(() => new FileSnapshotStore({ root, sessionId: '../escape' })).toThrow(/invalid session id/)
  })
})
