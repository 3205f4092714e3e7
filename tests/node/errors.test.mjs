// Errors, one rule for every call: a wrong type is a TypeError; any other invalid_argument or
// invalid_layout a RangeError, whether the value came from an argument or a FLAKERY_*
// variable; anything else a plain Error; every one carries its .code. Nothing crashes the
// process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

import { Client, Generator, compose, decode, layoutInfoOf, nextIds } from 'flakery'
import { throwsCode } from './helpers.mjs'

const require = createRequire(import.meta.url)

test('decode refuses a number above 2^53, pointing to bigint and string', () => {
  const e = throwsCode(() => decode(2 ** 60), RangeError, 'invalid_argument', /2\^53/)
  assert.match(e.message, /bigint|string/)
  throwsCode(() => decode(Number.MAX_SAFE_INTEGER + 1), RangeError, 'invalid_argument')
  // The largest safe integer is fine (it decodes; twitter has 63 bits).
  assert.equal(decode(Number.MAX_SAFE_INTEGER).id, 9007199254740991n)
})

test('decode refuses non-integers and malformed strings', () => {
  for (const bad of [1.5, NaN, Infinity, -Infinity]) throwsCode(() => decode(bad), RangeError, 'invalid_argument')
  for (const bad of ['12x', '', ' ', '1e3', '0x10', '1.0', '--1', '١٢']) {
    throwsCode(() => decode(bad), RangeError, 'invalid_argument', /not an ID/)
  }
})

// core/src/decimal.rs's REFUSED_EXAMPLES: what every surface refuses as decimal text.
const NOT_CANONICAL = ['+3', '03', ' 5', '5 ', '\u20035', '-0', '0x10', '1e3', '\uff11', '',
  '18446744073709551616', '-']

test('decimal strings are canonical decimal only', () => {
  for (const bad of NOT_CANONICAL) {
    throwsCode(() => decode(bad), RangeError, 'invalid_argument', /plain decimal|larger than the largest ID/)
  }
  assert.equal(decode('0').id, 0n)
  assert.equal(decode('175928847299117063', { layout: 'discord' }).sequence, 7)
})

test('decode refuses negative IDs: bigint, string, number', () => {
  for (const bad of [-1n, '-1', -1, -(2n ** 63n), -(2n ** 64n) - 5n, '-9223372036854775808']) {
    throwsCode(() => decode(bad), RangeError, 'invalid_argument', /negative/)
  }
})

test('decode refuses IDs above 2^63-1 and bits a layout does not have', () => {
  for (const bad of [2n ** 63n, 2n ** 64n, 2n ** 100n, '9223372036854775808', '99999999999999999999999']) {
    throwsCode(() => decode(bad), RangeError, 'invalid_argument', /larger than the largest ID/)
  }
  // safe53 has 53 bits: a higher bit is not one of its IDs.
  throwsCode(() => decode(2n ** 60n, { layout: 'safe53' }), RangeError, 'invalid_argument', /bits set above/)
})

test('decode: wrong types are TypeErrors', () => {
  for (const bad of [undefined, null, true, {}, [], Symbol('x'), () => 1, new Date()]) {
    throwsCode(() => decode(bad), TypeError, 'invalid_argument')
  }
  throwsCode(() => decode(1n, 5), TypeError, 'invalid_argument')
  throwsCode(() => decode(1n, null), TypeError, 'invalid_argument')
  throwsCode(() => decode(1n, { layout: 5 }), TypeError, 'invalid_argument')
  throwsCode(() => decode(1n, { layuot: 'discord' }), TypeError, 'invalid_argument', /unknown key 'layuot'/)
})

test('an invalid layout is a RangeError with code invalid_layout', () => {
  throwsCode(() => decode(1n, { layout: 'nope' }), RangeError, 'invalid_layout', /nope/)
  throwsCode(() => decode(1n, 'time:41,worker:10;epoch=0'), RangeError, 'invalid_layout', /sequence/)
  throwsCode(() => new Generator({ layout: 'twitter;unit=hours' }), RangeError, 'invalid_layout', /hours/)
  throwsCode(() => layoutInfoOf('time:70,sequence:1;epoch=0'), RangeError, 'invalid_layout')
  throwsCode(() => layoutInfoOf(5), TypeError, 'invalid_argument')
  throwsCode(() => new Generator({ layout: {} }), TypeError, 'invalid_argument')
})

test('Generator: node IDs out of range are RangeErrors', () => {
  throwsCode(() => new Generator({ workerId: 32 }), RangeError, 'invalid_argument', /5 bits/)
  throwsCode(() => new Generator({ datacenterId: 32 }), RangeError, 'invalid_argument', /5 bits/)
  throwsCode(() => new Generator({ layout: 'instagram', workerId: 8192 }), RangeError, 'invalid_argument', /13 bits/)
  throwsCode(() => new Generator({ layout: 'instagram', datacenterId: 1 }), RangeError, 'invalid_argument')
  throwsCode(() => new Generator({ workerId: -1 }), RangeError, 'invalid_argument', /negative/)
  throwsCode(() => new Generator({ workerId: -1n }), RangeError, 'invalid_argument', /negative/)
  throwsCode(() => new Generator({ workerId: 1.5 }), RangeError, 'invalid_argument', /integer/)
  throwsCode(() => new Generator({ workerId: 2 ** 60 }), RangeError, 'invalid_argument', /2\^53/)
  throwsCode(() => new Generator({ workerId: 2n ** 64n }), RangeError, 'invalid_argument', /64 bits/)
  throwsCode(() => new Generator({ sequencePolicy: 'sometimes' }), RangeError, 'invalid_argument', /sometimes/)
  throwsCode(() => new Generator({ layout: 'vesta-max-peak', fields: { nope: 1 } }), RangeError, 'invalid_argument', /nope/)
  throwsCode(() => new Generator({ layout: 'vesta-max-peak', fields: { method: 4 } }), RangeError, 'invalid_argument')
})

test("the core's messages name options as JavaScript does", () => {
  throwsCode(() => new Generator({ workerId: 32 }), RangeError, 'invalid_argument', /^workerId 32 does not fit in 5 bits \(0 to 31\)$/)
  throwsCode(() => new Generator({ layout: 'instagram', datacenterId: 1 }), RangeError, 'invalid_argument', /so datacenterId must be 0, not 1$/)
  throwsCode(() => compose({ timestampMs: Date.now(), datacenterId: 40 }), RangeError, 'invalid_argument', /^datacenterId 40 does not fit/)
  throwsCode(() => compose({ timestampMs: Date.now(), sequence: 4096 }), RangeError, 'invalid_argument', /^sequence 4096 does not fit/)
  // Every option through the table (core/src/option_table/): this one said sequence_policy.
  throwsCode(() => new Generator({ sequencePolicy: 'sometimes' }), RangeError, 'invalid_argument', /^sequencePolicy 'sometimes' is not 'wait' or 'borrow'$/)
  throwsCode(() => new Generator({ layout: 'instagram', datacenterId: 1 }), RangeError, 'invalid_argument', /^(?!.*[a-z]_[a-z])/)
})

test("a Client's durations are refused as JavaScript wrote them, never as a Rust Duration", () => {
  // The rows of docs/client.md#options whose default is in milliseconds; their Node column.
  const doc = readFileSync(new URL('../../docs/client.md', import.meta.url), 'utf8')
  const lines = doc.split('## Options')[1].split('\n')
  const start = lines.findIndex((line) => line.startsWith('|'))
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'))
  const rows = lines.slice(start + 2, end).map((line) => line.split('|').map((cell) => cell.trim()))
  const keys = rows.filter((row) => row[9].endsWith(' ms')).map((row) => row[3].replaceAll('`', ''))
  assert.deepEqual(keys, ['maxAgeMs', 'timeoutMs', 'requestTimeoutMs'])
  const servers = 'http://127.0.0.1:1' // never asked: the options are checked first
  for (const key of keys) {
    const e = throwsCode(() => new Client({ servers, [key]: 0 }), RangeError, 'invalid_argument')
    assert.equal(e.message, `${key} must be at least 1, not 0`)
    new Client({ servers, [key]: 1 }).close()
  }
})

test('the keys of Generator options are the table of docs/spec.md#generator-options', () => {
  const spec = readFileSync(new URL('../../docs/spec.md', import.meta.url), 'utf8')
  const lines = spec.split('### Generator options')[1].split('\n')
  const start = lines.findIndex((line) => line.startsWith('|'))
  const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'))
  const table = lines.slice(start + 2, end)
  const keys = table.map((line) => line.split('|')[2].trim().replaceAll('`', ''))
  assert.equal(keys.length, 14)
  let message = ''
  try { new Generator({ bogus: 1 }) } catch (e) { message = e.message }
  assert.equal(message, `Generator options has an unknown key 'bogus' (known: ${keys.join(', ')})`)
})

test('Generator: wrong option types are TypeErrors', () => {
  for (const options of [5, 'twitter', null, [], true]) {
    throwsCode(() => new Generator(options), TypeError, 'invalid_argument')
  }
  const bad = [
    { workerId: '3' },
    { datacenterId: {} },
    { sequencePolicy: 1 },
    { maxBorrowMs: '1s' },
    { backwardsToleranceMs: null },
    { randomSequenceStart: 'yes' },
    { fields: 5 },
    { fields: [1] },
    { fields: { method: '2' } },
    { zookeeper: 2181 },
    { namespace: false },
    { sessionTimeoutMs: '10s' },
    { leaseDir: 1 },
    { workerID: 3 },
  ]
  for (const options of bad) throwsCode(() => new Generator(options), TypeError, 'invalid_argument', undefined)
})

test('Generator() without new is a TypeError, and leaves the module alone', () => {
  const flakery = require('flakery')
  throwsCode(() => flakery.Generator(), TypeError, 'invalid_argument', /new/)
  const { Generator: G } = flakery
  throwsCode(() => G({ workerId: 1 }), TypeError, 'invalid_argument', /new/)
  assert.equal(typeof flakery.nextId(), 'bigint')
})

test('an exception thrown by an option getter comes through as it is', () => {
  const boom = new Error('boom')
  assert.throws(
    () =>
      new Generator({
        get workerId() {
          throw boom
        },
      }),
    (e) => e === boom,
  )
})

test('nextIds: a count that is not a number is a TypeError, out of range a RangeError', () => {
  const g = new Generator({ workerId: 1 })
  for (const call of [(n) => nextIds(n), (n) => g.nextIds(n)]) {
    for (const bad of ['3', 3n, undefined, null, {}]) throwsCode(() => call(bad), TypeError, 'invalid_argument')
    for (const bad of [-1, 1.5, NaN, 2 ** 24 + 1, Infinity]) throwsCode(() => call(bad), RangeError, 'invalid_argument')
  }
})

test('compose: missing, wrong and out-of-range parts', () => {
  throwsCode(() => compose(), TypeError, 'invalid_argument')
  throwsCode(() => compose({}), TypeError, 'invalid_argument', /timestampMs/)
  throwsCode(() => compose({ timestampMs: '2020' }), TypeError, 'invalid_argument')
  throwsCode(() => compose({ timestampMs: Date.now(), when: 1 }), TypeError, 'invalid_argument', /unknown key/)
  throwsCode(() => compose({ timestampMs: 0 }), RangeError, 'invalid_argument', /before the epoch/)
  throwsCode(() => compose({ timestampMs: 1.5 }), RangeError, 'invalid_argument')
  throwsCode(() => compose({ timestampMs: Date.now(), workerId: 32 }), RangeError, 'invalid_argument')
  throwsCode(() => compose({ timestampMs: Date.now(), sequence: 4096 }), RangeError, 'invalid_argument')
  throwsCode(() => compose({ timestampMs: Date.now(), fields: { time: 1 } }), RangeError, 'invalid_argument')
  throwsCode(() => compose({ layout: 'baidu', timestampMs: Date.now() }), RangeError, 'invalid_argument', /past the end/)
})

test('an exhausted layout fails with time_exhausted, as a plain Error', () => {
  const g = new Generator({ layout: 'baidu', workerId: 1 })
  for (const call of [() => g.nextId(), () => g.nextIdString(), () => g.nextIds(3)]) {
    throwsCode(call, Error, 'time_exhausted', /ran out of time/)
  }
})

test('a bad FLAKERY_* variable is a RangeError from every call, as the same value passed is', () => {
  const script = `
    const f = require('flakery')
    const out = []
    const calls = [f.nextId, f.nextIdString, () => f.nextIds(2), () => new f.Generator().nextId()]
    for (const call of calls) {
      try { call(); out.push('no error') } catch (e) { out.push(e.constructor.name + ' ' + e.code) }
    }
    console.log(out.join('|'))`
  const run = (env) =>
    spawnSync(process.execPath, ['-e', script], { env: { ...process.env, ...env }, encoding: 'utf8' })
  const four = (what) => Array(4).fill(what).join('|')
  const badLayout = run({ FLAKERY_LAYOUT: 'nonsense' })
  assert.equal(badLayout.status, 0, badLayout.stderr)
  assert.equal(badLayout.stdout.trim(), four('RangeError invalid_layout'))
  const badWorker = run({ FLAKERY_WORKER_ID: 'seven' })
  assert.equal(badWorker.status, 0, badWorker.stderr)
  assert.equal(badWorker.stdout.trim(), four('RangeError invalid_argument'))
  const tooBig = run({ FLAKERY_WORKER_ID: '32' })
  assert.equal(tooBig.stdout.trim(), four('RangeError invalid_argument'))
  throwsCode(() => new Generator({ workerId: 32 }), RangeError, 'invalid_argument')
})
