// The published decode vectors of tests/vectors/decode.json (see its README), decoded by the
// Node binding exactly as the origin's code decodes them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

import { compose, decode } from 'flakery'

const path = fileURLToPath(new URL('../vectors/decode.json', import.meta.url))
const vectors = JSON.parse(readFileSync(path, 'utf8'))

test('tests/vectors/decode.json', async (t) => {
  assert.ok(vectors.length >= 20)
  for (const v of vectors) {
    await t.test(`${v.preset ?? 'custom'} ${v.id}`, () => {
      const layout = { layout: v.layout }
      const d = decode(v.id, layout)
      assert.equal(d.id, BigInt(v.id))
      assert.deepEqual(decode(BigInt(v.id), layout), d)
      assert.equal(d.timestampMs, v.decoded_timestamp_ms)
      assert.equal(d.date.getTime(), Date.parse(v.decoded_timestamp_utc))
      assert.ok(d.timestampMs >= v.timestamp_ms && d.timestampMs <= v.timestamp_ms + v.timestamp_tolerance_ms)
      assert.equal(d.datacenterId, v.datacenter_id ?? 0)
      assert.equal(d.workerId, v.worker_id ?? 0)
      assert.equal(d.sequence, v.sequence)
      assert.deepEqual(
        Object.fromEntries(Object.entries(d.fields).map(([k, x]) => [k, Number(x)])),
        v.fields,
      )
      // compose gives the ID back from its parts.
      const constants = {}
      for (const [name, value] of Object.entries(v.fields)) {
        if (!['time', 'datacenter', 'worker', 'sequence'].includes(name)) constants[name] = value
      }
      const id = compose({
        layout: v.layout,
        timestampMs: d.timestampMs,
        datacenterId: d.datacenterId,
        workerId: d.workerId,
        sequence: d.sequence,
        fields: constants,
      })
      assert.equal(id, BigInt(v.id))
    })
  }
})

// Discord IDs of 2^63 and above (tests/vectors/unsigned.json, from @sapphire/snowflake):
// decode takes them as a bigint (BigUint64) or decimal string, compose gives them back.
const unsignedPath = fileURLToPath(new URL('../vectors/unsigned.json', import.meta.url))
const unsignedVectors = JSON.parse(readFileSync(unsignedPath, 'utf8'))

test('tests/vectors/unsigned.json', () => {
  assert.ok(unsignedVectors.some((v) => BigInt(v.id) > 2n ** 63n - 1n))
  for (const v of unsignedVectors) {
    const d = decode(BigInt(v.id), v.layout)
    assert.equal(d.id, BigInt(v.id))
    assert.deepEqual(decode(v.id, v.layout), d)
    assert.equal(d.timestampMs, v.timestamp_ms)
    assert.equal(d.datacenterId, v.datacenter_id)
    assert.equal(d.workerId, v.worker_id)
    assert.equal(d.sequence, v.sequence)
    const id = compose({ layout: v.layout, timestampMs: d.timestampMs, datacenterId: d.datacenterId, workerId: d.workerId, sequence: d.sequence })
    assert.equal(id, BigInt(v.id))
  }
  // A signed layout refuses the same bits; no layout takes 2^64.
  assert.throws(() => decode(2n ** 63n, 'twitter'), { code: 'invalid_argument' })
  assert.throws(() => decode(2n ** 64n, 'discord'), { code: 'invalid_argument' })
  assert.throws(() => decode(-1n, 'discord'), { code: 'invalid_argument' })
})

test('layoutInfoOf tells the time left', async () => {
  const { layoutInfoOf } = await import('flakery')
  const before = Date.now()
  const twitter = layoutInfoOf('twitter')
  const after = Date.now()
  assert.ok(twitter.timeLeftMs <= twitter.exhaustedAtMs - before && twitter.timeLeftMs >= twitter.exhaustedAtMs - after)
  assert.equal(layoutInfoOf('baidu').timeLeftMs, 0)
  assert.equal(layoutInfoOf('discord').unsigned, true)
  assert.equal(twitter.unsigned, false)
})
