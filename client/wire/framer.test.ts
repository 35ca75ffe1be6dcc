/**
 * LineFramer over a corpus of byte streams, each fed at several chunkings (whole, 1-byte,
 * 2-byte, three seeded random ones) and split in two at every byte position: the frames must
 * not depend on how the bytes arrive. Limit 16 bytes throughout, so long-line cases stay short.
 */
import { describe, expect, it } from 'vitest'
import { LineFramer, type Frame } from './framer.ts'
import { prng } from './fixtures/seeded-random.ts'

const LIMIT = 16
const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const u8 = (s: string): Buffer => Buffer.from(s, 'utf8')
const cat = (...parts: (string | Buffer | number[])[]): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? u8(p) : Buffer.from(p))))
const line = (text: string): Frame => ({ kind: 'line', text })
const tail = (text: string): Frame => ({ kind: 'line', text, unterminated: true })
const INVALID: Frame = { kind: 'invalid_utf8' }
const tooLong = (bytes: number): Frame => ({ kind: 'too_long', bytes })

/** Feed `chunks` in order, then end(); every frame produced. */
function frames(chunks: Buffer[], limit = LIMIT): Frame[] {
  const f = new LineFramer(limit)
  const out: Frame[] = []
  for (const c of chunks) out.push(...f.push(c))
  out.push(...f.end())
  return out
}

const fixed =
  (size: number) =>
  (b: Buffer): Buffer[] => {
    const out: Buffer[] = []
    for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size))
    return out
  }
const random =
  (seed: number) =>
  (b: Buffer): Buffer[] => {
    const next = prng(seed)
    const out: Buffer[] = []
    for (let i = 0; i < b.length;) {
      const n = 1 + Math.floor(next() * 7)
      out.push(b.subarray(i, i + n))
      i += n
    }
    return out
  }

const CHUNKINGS: Record<string, (b: Buffer) => Buffer[]> = {
  whole: (b) => [b],
  '1-byte': fixed(1),
  '2-byte': fixed(2),
  'random(seed 1)': random(1),
  'random(seed 42)': random(42),
  'random(seed 2026)': random(2026),
}

interface Case {
  name: string
  input: Buffer
  want: Frame[]
}

const sixteen = '{"k":"abcdefgh"}' // exactly 16 bytes
const CORPUS: Case[] = [
  {
    name: 'several messages in one chunk',
    input: cat('{"a":1}\n{"b":2}\n{"c":3}\n'),
    want: [line('{"a":1}'), line('{"b":2}'), line('{"c":3}')],
  },
  { name: 'CRLF endings are stripped', input: cat('{"a":1}\r\n{"b":2}\r\n'), want: [line('{"a":1}'), line('{"b":2}')] },
  { name: 'a raw CR inside a message is kept', input: cat('{"a":\r1}\n'), want: [line('{"a":\r1}')] },
  { name: 'only one CR before LF is stripped', input: cat('{"a":1}\r\r\n'), want: [line('{"a":1}\r')] },
  { name: 'a CR-only ending does not end a frame', input: cat('{"a":1}\r{"b":2}\n'), want: [line('{"a":1}\r{"b":2}')] },
  {
    name: 'multi-byte characters (€, 😀) are decoded whole',
    input: cat('{"s":"€😀"}\n{"t":"😀€"}\n'),
    want: [line('{"s":"€😀"}'), line('{"t":"😀€"}')],
  },
  {
    name: 'invalid UTF-8 (0xff) is reported and the next line still framed',
    input: cat('{"s":"', [0xff], '"}\n{"ok":1}\n'),
    want: [INVALID, line('{"ok":1}')],
  },
  {
    name: 'a truncated multi-byte sequence before LF is invalid UTF-8',
    input: cat('"', [0xe2, 0x82], '"\n"€"\n'),
    want: [INVALID, line('"€"')],
  },
  {
    name: 'an overlong encoding is invalid UTF-8',
    input: cat('"', [0xc0, 0xaf], '"\nx\n'),
    want: [INVALID, line('x')],
  },
  {
    name: 'an encoded surrogate is invalid UTF-8',
    input: cat('"', [0xed, 0xa0, 0x80], '"\nx\n'),
    want: [INVALID, line('x')],
  },
  {
    name: 'a BOM at the start of the stream is dropped',
    input: cat(BOM, '{"a":1}\n{"b":2}\n'),
    want: [line('{"a":1}'), line('{"b":2}')],
  },
  {
    name: 'a BOM at the start of the stream does not count toward the line limit',
    input: cat(BOM, sixteen, '\n'),
    want: [line(sixteen)],
  },
  {
    name: 'a BOM at the start of a later line is NOT dropped',
    input: cat('{"a":1}\n', BOM, '{"b":2}\n'),
    want: [line('{"a":1}'), line('\uFEFF{"b":2}')],
  },
  {
    name: 'a second BOM right after the first is NOT dropped',
    input: cat(BOM, BOM, '{"a":1}\n'),
    want: [line('\uFEFF{"a":1}')],
  },
  { name: 'a BOM inside a line is NOT dropped', input: cat('x', BOM, 'y\n'), want: [line('x\uFEFFy')] },
  { name: 'whitespace-only lines are skipped', input: cat('\n \n\t\r\n \r \n{"a":1}\n   \n'), want: [line('{"a":1}')] },
  {
    name: 'an over-long line is reported once as too_long and the next line framed',
    input: cat('x'.repeat(40), '\n{"a":1}\n'),
    want: [tooLong(40), line('{"a":1}')],
  },
  {
    name: 'two over-long lines in a row are reported once each',
    input: cat('y'.repeat(17), '\n', 'z'.repeat(100), '\nok\n'),
    want: [tooLong(17), tooLong(100), line('ok')],
  },
  { name: 'a line exactly at the limit is accepted (LF)', input: cat(sixteen, '\n'), want: [line(sixteen)] },
  {
    name: 'a line exactly at the limit is accepted (CRLF)',
    input: cat(sixteen, '\r\n', sixteen, '\r\n'),
    want: [line(sixteen), line(sixteen)],
  },
  {
    name: 'a line of multi-byte characters exactly at the limit is accepted',
    input: cat('€€€€€a\n'),
    want: [line('€€€€€a')],
  },
  {
    name: 'one byte over the limit is too_long',
    input: cat(sixteen, '!\n', sixteen, '\n'),
    want: [tooLong(17), line(sixteen)],
  },
  {
    name: 'an unterminated tail is delivered by end()',
    input: cat('{"a":1}\n{"b":2}'),
    want: [line('{"a":1}'), tail('{"b":2}')],
  },
  {
    name: 'an over-long unterminated tail is reported by end()',
    input: cat('ok\n', 'w'.repeat(30)),
    want: [line('ok'), tooLong(30)],
  },
  { name: 'a whitespace-only tail yields nothing', input: cat('{"a":1}\n  '), want: [line('{"a":1}')] },
  { name: 'empty input yields nothing', input: cat(''), want: [] },
]

for (const [chunking, split] of Object.entries(CHUNKINGS)) {
  describe(`LineFramer, chunking: ${chunking}`, () => {
    for (const c of CORPUS) {
      it(c.name, () => {
        expect(frames(split(c.input))).toEqual(c.want)
      })
    }
  })
}

describe('LineFramer, split in two at every byte position', () => {
  for (const c of CORPUS) {
    it(c.name, () => {
      for (let i = 0; i <= c.input.length; i++) {
        expect(frames([c.input.subarray(0, i), c.input.subarray(i)]), `split at byte ${i}`).toEqual(c.want)
      }
    })
  }
})

describe('LineFramer, targeted splits', () => {
  it('€ and 😀 split at every byte position inside the character decode whole', () => {
    for (const ch of ['€', '😀']) {
      const bytes = cat(`"${ch}"\n`)
      const n = u8(ch).length
      for (let i = 1; i < 1 + n; i++) {
        // Split inside the character at every offset, and also byte by byte through it.
        expect(frames([bytes.subarray(0, i), bytes.subarray(i)]), `${ch} split at ${i}`).toEqual([line(`"${ch}"`)])
      }
      expect(frames(fixed(1)(bytes))).toEqual([line(`"${ch}"`)])
    }
  })

  it('a CR in one chunk and its LF in the next make one CRLF ending', () => {
    const f = new LineFramer(LIMIT)
    expect(f.push(u8('{"a":1}\r'))).toEqual([])
    expect(f.push(u8('\n{"b":2}\r'))).toEqual([line('{"a":1}')])
    expect(f.push(u8('\n'))).toEqual([line('{"b":2}')])
    expect(f.end()).toEqual([])
  })

  it('a line exactly at the limit whose CR arrives alone before the LF is accepted', () => {
    const f = new LineFramer(LIMIT)
    expect(f.push(u8(sixteen))).toEqual([])
    expect(f.push(u8('\r'))).toEqual([])
    expect(f.push(u8('\n'))).toEqual([line(sixteen)])
  })

  it('a BOM split across the first chunks is dropped', () => {
    for (const at of [1, 2]) {
      const input = cat(BOM, '{"a":1}\n')
      expect(frames([input.subarray(0, at), input.subarray(at)]), `BOM split at ${at}`).toEqual([line('{"a":1}')])
    }
    expect(frames(fixed(1)(cat(BOM, '{"a":1}\n')))).toEqual([line('{"a":1}')])
  })

  it('an empty first chunk does not stop the BOM from being dropped', () => {
    expect(frames([Buffer.alloc(0), cat(BOM, 'x\n')])).toEqual([line('x')])
  })

  it('the unterminated tail is held back until end()', () => {
    const f = new LineFramer(LIMIT)
    expect(f.push(u8('{"a":1}\n{"b"'))).toEqual([line('{"a":1}')])
    expect(f.push(u8(':2}'))).toEqual([])
    expect(f.end()).toEqual([tail('{"b":2}')])
  })

  it('an over-long line is reported when its LF arrives, not before', () => {
    const f = new LineFramer(LIMIT)
    expect(f.push(u8('x'.repeat(20)))).toEqual([])
    expect(f.push(u8('x'.repeat(20)))).toEqual([])
    expect(f.push(u8('\n{"a":1}\n'))).toEqual([tooLong(40), line('{"a":1}')])
  })

  it('an over-long CRLF line is reported as too_long', () => {
    expect(frames([cat('x'.repeat(30), '\r\nok\r\n')]).map((f) => f.kind)).toEqual(['too_long', 'line'])
  })

  it('accepts a Uint8Array view into a larger buffer (offset respected)', () => {
    const backing = cat('JUNK{"a":1}\nJUNK')
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 4, 8)
    expect(frames([Buffer.from(view.buffer, view.byteOffset, view.byteLength)])).toEqual([line('{"a":1}')])
    const f = new LineFramer(LIMIT)
    expect(f.push(view)).toEqual([line('{"a":1}')])
  })

  it('strict (the kit judging a peer): a BOM is kept and a blank line is delivered, for the reader to reject', () => {
    const f = new LineFramer(LIMIT, { strict: true })
    expect([...f.push(cat(BOM, '{}\n', '\n', '  \r\n', '{"a":1}')), ...f.end()]).toEqual([
      line('\uFEFF{}'),
      line(''),
      line('  '),
      tail('{"a":1}'),
    ])
  })
})
