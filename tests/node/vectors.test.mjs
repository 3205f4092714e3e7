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
