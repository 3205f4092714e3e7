// The package through require(), and the ES module entry seen from CommonJS.
const { test } = require('node:test')
const assert = require('node:assert/strict')

const flakery = require('flakery')

const API = [
  'Client',
  'Generator',
  'compose',
  'decode',
  'doctor',
  'fromBase32',
  'fromBase62',
  'layoutInfoOf',
  'layouts',
  'nextId',
  'nextIdString',
  'nextIds',
  'toBase32',
  'toBase62',
]

test('require("flakery") gives the whole API', () => {
  for (const name of API) assert.equal(typeof flakery[name], 'function', name)
  assert.equal(typeof flakery.nextId(), 'bigint')
  const g = new flakery.Generator({ workerId: 3 })
  assert.equal(flakery.decode(g.nextId()).workerId, 3)
  assert.ok(flakery.nextIds(3) instanceof BigInt64Array)
})

test('import("flakery") is the same module, with the same named exports', async () => {
  const esm = await import('flakery')
  for (const name of API) assert.equal(esm[name], flakery[name], name)
  assert.equal(esm.default, flakery)
  const exported = Object.keys(flakery).filter((k) => !k.startsWith('__napi')).sort()
  const named = Object.keys(esm).filter((k) => k !== 'default').sort()
  assert.deepEqual(named, exported, 'index.mjs re-exports everything index.js exports')
  assert.deepEqual(exported, [...API].sort())
})
