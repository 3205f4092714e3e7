// Shared by the node:test files.
import assert from 'node:assert/strict'

export const CODES = [
  'invalid_layout',
  'invalid_argument',
  'time_exhausted',
  'clock_moved_backwards',
  'lease_lost',
  'coordinator_unavailable',
  'worker_ids_exhausted',
  'forked',
  'servers_unavailable',
  'unauthorized',
  'bad_answer',
  'tls_failed',
]

// Asserts that fn throws an instance of `type` (an Error subclass) carrying `code`.
export function throwsCode(fn, type, code, message) {
  let caught
  try {
    fn()
  } catch (error) {
    caught = error
  }
  assert.ok(caught, `expected a throw with code ${code}`)
  assert.ok(caught instanceof Error, `not an Error: ${caught}`)
  assert.equal(caught.constructor, type, `${caught.constructor.name}: ${caught.message}`)
  assert.equal(caught.code, code, caught.message)
  assert.ok(CODES.includes(caught.code))
  if (message) assert.match(caught.message, message)
  return caught
}

export function assertIncreasing(ids) {
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i] > ids[i - 1], `not increasing at ${i}: ${ids[i - 1]} then ${ids[i]}`)
  }
}

// The generator reads CLOCK_REALTIME_COARSE, which trails Date.now() by up to one kernel tick
// (4 ms at HZ=250); a resolution, not a duration.
const COARSE_TICK_MS = 10

// Asserts that an ID's time (waiting policy: never ahead of the clock) lies between two
// readings of the clock taken before and after it was made: an order of events, no bound on
// how long anything took.
export function assertMadeBetween(timestampMs, before, after) {
  assert.ok(
    before - COARSE_TICK_MS <= timestampMs && timestampMs <= after,
    `the ID's time ${timestampMs} is not between ${before} and ${after}`,
  )
}
