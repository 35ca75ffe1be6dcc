/**
 * The transcript the msw mock replays by default is what the real core records today: if the
 * core's events change, this fails until the sample is re-recorded
 * (`node_modules/.bin/tsx scripts/record-sample-transcript.ts`).
 */
import { describe, expect, it } from 'vitest'
import { recordSample } from '../../scripts/record-sample-transcript.ts'
import { sampleTranscript } from './sample-transcript.ts'

describe('the sample transcript', () => {
  it('equals a fresh recording of the core on the offline model', async () => {
    expect(await recordSample()).toEqual(sampleTranscript)
  })
})
