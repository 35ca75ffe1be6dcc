/** Store paths: home and root, event file names, and the strict session-id check. */
import { homedir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  chimeraHome,
  eventFileName,
  eventlogRoot,
  isSessionId,
  newSessionId,
  parseEventFileName,
  sessionDir,
} from './paths.ts'

const GOOD = 'otter-20260425T120300Z-1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b'

describe('store paths', () => {
  it('resolves the home and the event-log root', () => {
    expect(chimeraHome({ CHIMERA_HOME: '/x/home' })).toBe('/x/home')
    expect(chimeraHome({})).toBe(join(homedir(), '.chimera'))
    expect(chimeraHome({ CHIMERA_HOME: '' })).toBe(join(homedir(), '.chimera'))
    expect(eventlogRoot('/x/home')).toBe(join('/x/home', 'eventlog'))
    expect(sessionDir('/r', GOOD)).toBe(join('/r', GOOD))
    expect(() => sessionDir('/r', '../etc')).toThrow(/invalid session id/)
  })

  it('names event files and parses only canonical names', () => {
    expect(eventFileName(1, 'text_delta')).toBe('event-000001-text_delta.json')
    expect(eventFileName(1234567, 'usage')).toBe('event-1234567-usage.json')
    expect(parseEventFileName('event-000042-tool_call.json')).toEqual({ seq: 42, type: 'tool_call' })
    expect(parseEventFileName('event-1234567-usage.json')).toEqual({ seq: 1234567, type: 'usage' })
    for (const bad of [
      'event-42-usage.json',
      'event-0000042-usage.json',
      'event-000000-usage.json',
      'event-000001-bogus.json',
      'event-000001-usage.json.tmp',
      'event-000001-usage',
      'x-event-000001-usage.json',
    ]) {
      expect(parseEventFileName(bad)).toBeUndefined()
    }
    expect(() => eventFileName(0, 'usage')).toThrow()
  })

  it('makes session ids that isSessionId accepts', () => {
    const id = newSessionId('ferret', new Date('2026-04-25T12:03:04.567Z'))
    expect(id).toMatch(/^ferret-20260425T120304Z-[0-9a-f-]{36}$/)
    expect(isSessionId(id)).toBe(true)
    expect(isSessionId(GOOD)).toBe(true)
    expect(newSessionId('mink')).not.toBe(newSessionId('mink'))
  })

  it('rejects everything but the exact shape', () => {
    for (const bad of [
      '',
      '..',
      '.',
      '/',
      'otter',
      `${GOOD}/..`,
      `../${GOOD}`,
      `${GOOD}\0`,
      `${GOOD}\\x`,
      ` ${GOOD}`,
      `${GOOD}\n`,
      GOOD.toUpperCase(),
      GOOD.replace('otter', 'weasel'),
      GOOD.replace('20260425', '20260230'),
      GOOD.replace('T120300Z', 'T250000Z'),
      GOOD.replace('-4d3b-', '-3d3b-'),
      GOOD.replace('-a3f5-', '-c3f5-'),
      GOOD.slice(0, -1),
      `${GOOD}0`,
      42,
      null,
      undefined,
    ]) {
      expect(isSessionId(bad)).toBe(false)
    }
  })
})
