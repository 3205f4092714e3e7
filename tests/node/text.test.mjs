// The text forms: toBase32/fromBase32, toBase62/fromBase62 and nextIdString({format}).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'

import { Generator, decode, fromBase32, fromBase62, nextIdString, toBase32, toBase62 } from 'flakery'
import { throwsCode } from './helpers.mjs'

const MAX = 2n ** 63n - 1n
const FORMS = [
  { name: 'base32', to: toBase32, from: fromBase32, length: 13 },
  { name: 'base62', to: toBase62, from: fromBase62, length: 11 },
]

// IDs over the whole range: the ends, powers of two either side, random ones of every width.
function sampleIds() {
  const ids = [0n, 1n, MAX, MAX - 1n]
  for (let bits = 1n; bits < 63n; bits++) ids.push(2n ** bits - 1n, 2n ** bits, 2n ** bits + 1n)
  for (let i = 0; i < 500; i++) {
    const width = BigInt(1 + (i % 63))
    ids.push(randomBytes(8).readBigUInt64BE() & ((1n << width) - 1n))
  }
  return ids
}

test('known values (the ends and a Discord ID)', () => {
  assert.equal(toBase32(0n), '0000000000000')
  assert.equal(toBase32(MAX), '7ZZZZZZZZZZZZ')
  assert.equal(toBase32(175928847299117063n), '04W86BB0G4007')
  assert.equal(toBase62(0n), '00000000000')
  assert.equal(toBase62(MAX), 'AzL8n0Y58m7')
  assert.equal(toBase62(175928847299117063n), '0Czks0tP37X')
  // The ID is taken as decode takes it: bigint, decimal string, safe-integer number.
  assert.equal(toBase32('175928847299117063'), '04W86BB0G4007')
  assert.equal(toBase62(61), '0000000000z')
})

test('round trip: from(to(id)) is id, at a fixed width', () => {
  for (const { name, to, from, length } of FORMS) {
    for (const id of sampleIds()) {
      const text = to(id)
      assert.equal(text.length, length, `${name} ${id}`)
      assert.equal(from(text), id, `${name} ${id} -> ${text}`)
    }
  }
})

test('order: sorting the strings sorts the IDs', () => {
  const g = new Generator({ workerId: 1 })
  const ids = [...sampleIds(), ...g.nextIds(1000)]
  const byId = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  for (const { name, to } of FORMS) {
    const texts = ids.map(to)
    const sorted = [...texts].sort() // code-unit order, which is byte order for ASCII
    assert.deepEqual(sorted, byId.map(to), name)
  }
})

test('base32 is read case-insensitively, with Crockford aliases', () => {
  assert.equal(fromBase32('7zzzzzzzzzzzz'), MAX)
  assert.equal(fromBase32('04w86bb0g4007'), 175928847299117063n)
  assert.equal(fromBase32('O4W86BBOG4OO7'), 175928847299117063n)
  assert.equal(fromBase32('000000000000I'), 1n)
  assert.equal(fromBase32('000000000000l'), 1n)
  // base62 is case-sensitive: 'z' is 61, 'Z' is 35.
  assert.equal(fromBase62('0000000000z'), 61n)
  assert.equal(fromBase62('0000000000Z'), 35n)
})

test('bad strings: a RangeError with code invalid_argument naming the character or reason', () => {
  throwsCode(() => fromBase32('000000000000U'), RangeError, 'invalid_argument', /character 13 \('U'\)/)
  throwsCode(() => fromBase32('0000-00000000'), RangeError, 'invalid_argument', /character 5 \('-'\)/)
  throwsCode(() => fromBase32('00000000000é0'), RangeError, 'invalid_argument', /'é'/)
  throwsCode(() => fromBase62('00000000_00'), RangeError, 'invalid_argument', /character 9 \('_'\)/)
  throwsCode(() => fromBase62('0000000000 '), RangeError, 'invalid_argument', /' '/)
  for (const { from, length } of FORMS) {
    throwsCode(() => from(''), RangeError, 'invalid_argument', new RegExp(`exactly ${length}`))
    throwsCode(() => from('0'.repeat(length + 1)), RangeError, 'invalid_argument', new RegExp(`exactly ${length}`))
    for (const bad of [5, 5n, null, undefined, {}]) throwsCode(() => from(bad), TypeError, 'invalid_argument')
  }
  // Above 2^63-1.
  throwsCode(() => fromBase32('8000000000000'), RangeError, 'invalid_argument', /2\^63-1/)
  throwsCode(() => fromBase32('ZZZZZZZZZZZZZ'), RangeError, 'invalid_argument', /2\^63-1/)
  throwsCode(() => fromBase62('AzL8n0Y58m8'), RangeError, 'invalid_argument', /2\^63-1/)
  throwsCode(() => fromBase62('zzzzzzzzzzz'), RangeError, 'invalid_argument', /2\^63-1/)
  // IDs without a text form.
  for (const { to } of FORMS) {
    throwsCode(() => to(-1n), RangeError, 'invalid_argument', /negative/)
    throwsCode(() => to(2n ** 63n), RangeError, 'invalid_argument')
    throwsCode(() => to(2 ** 60), RangeError, 'invalid_argument', /2\^53/)
    throwsCode(() => to({}), TypeError, 'invalid_argument')
  }
})

test('nextIdString({format}): the text forms, in one increasing sequence', () => {
  const g = new Generator({ workerId: 5 })
  const decimal = g.nextIdString()
  const b32 = g.nextIdString({ format: 'base32' })
  const b62 = g.nextIdString({ format: 'base62' })
  const again = g.nextIdString({ format: 'decimal' })
  assert.match(b32, /^[0-9A-HJKMNP-TV-Z]{13}$/)
  assert.match(b62, /^[0-9A-Za-z]{11}$/)
  const ids = [BigInt(decimal), fromBase32(b32), fromBase62(b62), BigInt(again)]
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${ids}`)
  assert.equal(decode(fromBase32(b32)).workerId, 5)
  assert.match(nextIdString({ format: 'base32' }), /^[0-9A-Z]{13}$/)
  assert.match(nextIdString(), /^[0-9]+$/)
  for (const call of [(o) => g.nextIdString(o), (o) => nextIdString(o)]) {
    throwsCode(() => call({ format: 'hex' }), RangeError, 'invalid_argument', /'hex'/)
    throwsCode(() => call({ format: 32 }), TypeError, 'invalid_argument', /format/)
    throwsCode(() => call({ fromat: 'base32' }), TypeError, 'invalid_argument', /unknown key 'fromat'/)
    throwsCode(() => call('base32'), TypeError, 'invalid_argument')
  }
})
