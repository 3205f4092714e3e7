// The public API, imported as an ES module.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import flakery, {
  Generator,
  compose,
  decode,
  layoutInfoOf,
  layouts,
  nextId,
  nextIdString,
  nextIds,
} from 'flakery'
import { assertIncreasing, assertMadeBetween } from './helpers.mjs'

test('nextId returns increasing non-negative bigints from the default generator', () => {
  const ids = Array.from({ length: 9_999 }, () => nextId())
  const before = Date.now()
  ids.push(nextId())
  const after = Date.now()
  for (const id of ids) {
    assert.equal(typeof id, 'bigint')
    assert.ok(id > 0n && id < 2n ** 63n)
  }
  assertIncreasing(ids)
  assertMadeBetween(decode(ids.at(-1)).timestampMs, before, after)
})

test('nextIdString returns the decimal string of an ID', () => {
  const before = nextId()
  const text = nextIdString()
  assert.match(text, /^[1-9][0-9]*$/)
  assert.ok(BigInt(text) > before)
  assert.ok(nextId() > BigInt(text))
})

test('nextIds returns a BigInt64Array of increasing IDs', () => {
  const before = nextId()
  const ids = nextIds(5_000)
  assert.ok(ids instanceof BigInt64Array)
  assert.equal(ids.length, 5_000)
  assert.ok(ids[0] > before)
  assertIncreasing(ids)
  assert.ok(nextId() > ids[4_999])
  assert.equal(nextIds(0).length, 0)
  assert.equal(nextIds(1).length, 1)
})

test('a Generator stamps its node identity and layout', () => {
  const g = new Generator({ layout: 'discord', datacenterId: 3, workerId: 17 })
  assert.equal(g.layout, 'discord')
  assert.equal(g.datacenterId, 3)
  assert.equal(g.workerId, 17)
  assert.equal(g.source, 'explicit')
  assert.equal(g.closed, false)
  const before = Date.now()
  const id = g.nextId()
  const after = Date.now()
  const d = decode(id, { layout: 'discord' })
  assert.equal(d.datacenterId, 3)
  assert.equal(d.workerId, 17)
  assert.equal(d.id, id)
  assertMadeBetween(d.timestampMs, before, after)
  assert.ok(d.date instanceof Date)
  assert.equal(d.date.getTime(), d.timestampMs)
  assert.deepEqual(Object.keys(d.fields), ['time', 'datacenter', 'worker', 'sequence'])
  assert.ok(g instanceof Generator)
})

test('Generator methods: nextId, nextIdString, nextIds, in one increasing sequence', () => {
  const g = new Generator({ workerId: 1 })
  const a = g.nextId()
  const b = BigInt(g.nextIdString())
  const c = g.nextIds(1_000)
  const d = g.nextId()
  assertIncreasing([a, b, ...c, d])
  // Detached methods stay bound to their generator, whatever `this` they are called with.
  const detached = g.nextId
  const e = detached()
  assert.ok(e > d)
  const other = new Generator({ workerId: 2 })
  const f = g.nextIdString.call(other)
  assert.ok(BigInt(f) > e)
  assert.equal(decode(f).workerId, 1)
  assert.equal(decode(g.nextIds.call(null, 3)[2]).workerId, 1)
  // Each generator has its own functions; none are on the prototype (one body per call).
  assert.notEqual(g.nextId, other.nextId)
  for (const name of ['nextId', 'nextIdString', 'nextIds']) {
    assert.equal(Object.hasOwn(Generator.prototype, name), false, name)
  }
  // The bound methods are not enumerable: a generator looks like an empty object.
  assert.deepEqual(Object.keys(g), [])
})

test('Generator options: layout object, bigint node IDs, policies, constant fields', () => {
  const sonyflake = layouts().find((l) => l.name === 'sonyflake')
  const g = new Generator({
    layout: sonyflake,
    workerId: 65_535n,
    sequencePolicy: 'borrow',
    maxBorrowMs: 50,
    backwardsToleranceMs: 10,
    randomSequenceStart: true,
  })
  assert.equal(g.layout, 'sonyflake')
  assert.equal(g.workerId, 65_535)
  assert.equal(g.datacenterId, 0)
  const ids = g.nextIds(2_000)
  assertIncreasing(ids)
  for (const id of ids.slice(0, 10)) assert.equal(decode(id, { layout: 'sonyflake' }).workerId, 65_535)

  const vesta = new Generator({ layout: 'vesta-max-peak', workerId: 5, fields: { method: 2 } })
  const v = decode(vesta.nextId(), 'vesta-max-peak')
  assert.deepEqual(
    { version: v.fields.version, type: v.fields.type, method: v.fields.method, worker: v.workerId },
    { version: 0, type: 0, method: 2, worker: 5 },
  )
  const custom = new Generator({ layout: 'time:41,worker:10,sequence:12;epoch=1288834974657', workerId: 1023 })
  assert.equal(custom.layout, 'time:41,worker:10,sequence:12;epoch=1288834974657;unit=ms')
  assert.equal(decode(custom.nextId(), custom.layout).workerId, 1023)

  // Lease options pass through (no ZooKeeper is asked when the node ID is explicit).
  const leased = new Generator({ workerId: 2, zookeeper: '127.0.0.1:1', namespace: 'test', sessionTimeoutMs: 1000, leaseDir: '/tmp' })
  assert.equal(leased.workerId, 2)
  // undefined means not given.
  assert.equal(new Generator({ layout: undefined, workerId: 4, fields: undefined }).layout, 'twitter')
})

test('an unconfigured Generator leases a node ID on this host (leaseDir passes through)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flakery-node-test-'))
  try {
    const a = new Generator({ leaseDir: dir })
    const b = new Generator({ leaseDir: dir })
    assert.equal(a.source, 'host_lease')
    assert.notEqual(`${a.datacenterId}/${a.workerId}`, `${b.datacenterId}/${b.workerId}`)
    assert.ok(readdirSync(dir).length > 0, 'the lease files are under leaseDir')
    const [aNode, aId] = [`${a.datacenterId}/${a.workerId}`, a.nextId()]
    a.close()
    const c = new Generator({ leaseDir: dir })
    assert.equal(`${c.datacenterId}/${c.workerId}`, aNode, 'a closed lease is free again')
    assert.ok(c.nextId() > aId, 'and its successor does not reuse its time')
    b.close()
    c.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('close() releases the generator: later calls fail with lease_lost', () => {
  const g = new Generator({ workerId: 9 })
  g.nextId()
  g.close()
  assert.equal(g.closed, true)
  for (const call of [() => g.nextId(), () => g.nextIdString(), () => g.nextIds(2)]) {
    assert.throws(call, (e) => e instanceof Error && e.code === 'lease_lost')
  }
  g.close()
})

test('decode: the documented Discord and Wikipedia IDs', () => {
  const discord = decode(175928847299117063n, { layout: 'discord' })
  assert.equal(discord.timestampMs, 1462015105796)
  assert.equal(discord.date.toISOString(), '2016-04-30T11:18:25.796Z')
  assert.equal(discord.datacenterId, 1)
  assert.equal(discord.workerId, 0)
  assert.equal(discord.sequence, 7)
  assert.equal(discord.id, 175928847299117063n)

  const wikipedia = decode('1541815603606036480')
  assert.equal(wikipedia.date.toISOString(), '2022-06-28T16:07:40.105Z')
  assert.equal(wikipedia.timestampMs, 1656432460105)
  assert.equal(wikipedia.datacenterId, 11)
  assert.equal(wikipedia.workerId, 26)
  assert.equal(wikipedia.sequence, 0)
  assert.deepEqual(wikipedia.fields, { time: 367597485448, datacenter: 11, worker: 26, sequence: 0 })
  // A string layout in place of the options object.
  assert.equal(decode(175928847299117063n, 'discord').sequence, 7)
})

test('decode accepts the same ID as bigint, string and safe-integer number', () => {
  const g = new Generator({ layout: 'safe53', workerId: 63 })
  const id = g.nextId()
  assert.ok(id < 2n ** 53n, 'safe53 IDs are below 2^53')
  const fromBigint = decode(id, { layout: 'safe53' })
  assert.deepEqual(decode(String(id), { layout: 'safe53' }), fromBigint)
  assert.deepEqual(decode(Number(id), { layout: 'safe53' }), fromBigint)
  assert.equal(fromBigint.workerId, 63)
  assert.deepEqual(decode(0), decode(0n))
})

test('compose is the inverse of decode, for every preset', () => {
  for (const info of layouts()) {
    const fields = {}
    for (const f of info.fields) if (f.kind === 'constant') fields[f.name] = f.default
    const max = (kind) => {
      const f = info.fields.find((x) => x.kind === kind)
      return f ? 2 ** f.bits - 1 : 0
    }
    // A time inside the layout's range, not on a tick boundary.
    const unitMs = { ms: 1, '10ms': 10, s: 1000 }[info.unit]
    const timestampMs = info.epochMs + 123_456 * unitMs + (unitMs - 1)
    const parts = {
      layout: info.name,
      timestampMs,
      datacenterId: max('datacenter'),
      workerId: max('worker'),
      sequence: max('sequence'),
      fields,
    }
    const id = compose(parts)
    assert.equal(typeof id, 'bigint')
    const d = decode(id, { layout: info.name })
    assert.equal(d.timestampMs, timestampMs - (unitMs - 1), `${info.name}: rounded down to the tick`)
    assert.equal(d.datacenterId, parts.datacenterId, info.name)
    assert.equal(d.workerId, parts.workerId, info.name)
    assert.equal(d.sequence, parts.sequence, info.name)
    for (const [name, value] of Object.entries(fields)) assert.equal(d.fields[name], value)
    // And back: composing the decoded parts gives the same ID.
    const again = compose({
      layout: info.spec,
      timestampMs: d.timestampMs,
      datacenterId: d.datacenterId,
      workerId: d.workerId,
      sequence: d.sequence,
      fields,
    })
    assert.equal(again, id, info.name)
  }
})

test('compose: defaults to twitter, takes bigints', () => {
  const id = compose({ timestampMs: 1656432460105n, datacenterId: 11n, workerId: 26, sequence: 0 })
  assert.equal(id, 1541815603606036480n)
  assert.equal(compose({ layout: 'discord', timestampMs: 1462015105796, datacenterId: 1, sequence: 7 }), 175928847299117063n)
})

test('layouts() lists the presets with their capacity', () => {
  const all = layouts()
  assert.deepEqual(
    all.map((l) => l.name),
    ['twitter', 'discord', 'instagram', 'sonyflake', 'sonyflake-v2', 'baidu', 'vesta-max-peak', 'vesta-min-granularity', 'safe53'],
  )
  const twitter = all[0]
  assert.equal(twitter.epochMs, 1288834974657)
  assert.equal(twitter.epoch.getTime(), 1288834974657)
  assert.equal(twitter.unit, 'ms')
  assert.equal(twitter.idsPerTick, 4096)
  assert.equal(twitter.idsPerSecond, 4_096_000)
  assert.equal(twitter.nodeIds, 1024)
  assert.equal(twitter.totalBits, 63)
  assert.equal(twitter.canonical, 'twitter')
  assert.deepEqual(
    twitter.fields.map((f) => [f.name, f.kind, f.bits, f.shift]),
    [
      ['time', 'time', 41, 22],
      ['datacenter', 'datacenter', 5, 17],
      ['worker', 'worker', 5, 12],
      ['sequence', 'sequence', 12, 0],
    ],
  )
  assert.equal(twitter.exhaustedAt.toISOString(), '2080-07-10T17:30:30.209Z')
  const baidu = all.find((l) => l.name === 'baidu')
  assert.equal(baidu.exhaustedAt.toISOString(), '2024-11-20T13:24:16.000Z')
  assert.equal(baidu.epoch.toISOString(), '2016-05-19T16:00:00.000Z')
  const vesta = all.find((l) => l.name === 'vesta-min-granularity')
  assert.equal(vesta.fields.find((f) => f.name === 'type').default, 1)
  for (const l of all) assert.match(l.description, /IDs\/tick\/node/)
})

test('layoutInfoOf describes any layout spec', () => {
  const shifted = layoutInfoOf('twitter;epoch=2020-01-01T00:00:00Z')
  assert.equal(shifted.name, null)
  assert.equal(shifted.canonical, 'twitter;epoch=1577836800000')
  assert.equal(shifted.epoch.toISOString(), '2020-01-01T00:00:00.000Z')
  assert.equal(layoutInfoOf('discord').name, 'discord')
  const wide = layoutInfoOf('time:55,sequence:8;epoch=0')
  assert.equal(wide.exhaustedAt, null, 'past what a Date holds')
  assert.ok(wide.exhaustedAtMs > 8.64e15)
})

test('fields wider than 53 bits come out as bigint', () => {
  const spec = 'time:8,worker:54,sequence:1;epoch=0;unit=s'
  const id = compose({ layout: spec, timestampMs: 5000, workerId: 2n ** 54n - 1n, sequence: 1 })
  const d = decode(id, spec)
  assert.equal(d.workerId, 2n ** 54n - 1n)
  assert.equal(d.fields.worker, 2n ** 54n - 1n)
  assert.equal(d.fields.time, 5)
  assert.equal(d.sequence, 1)
})

test('the default export is the CommonJS module', () => {
  assert.equal(flakery.nextId, nextId)
  assert.equal(flakery.Generator, Generator)
})

// decode, layouts and layoutInfoOf return napi-rs objects (#[napi(object)]): their keys, in
// this order, and the type of each value are the shape index.d.ts declares.
const shapeOf = (o) => Object.entries(o).map(([k, v]) => [k, v === null ? 'null' : v instanceof Date ? 'Date' : typeof v])

test('decode, layouts and layoutInfoOf keep their shapes', () => {
  assert.deepEqual(shapeOf(decode(1541815603606036480n)), [
    ['id', 'bigint'], ['timestampMs', 'number'], ['date', 'Date'], ['datacenterId', 'number'],
    ['workerId', 'number'], ['sequence', 'number'], ['fields', 'object'],
  ])
  // A field wider than 53 bits is a bigint, whatever its value; the others stay numbers.
  const wide = decode(5n, { layout: 'time:8,sequence:55;epoch=0' })
  assert.deepEqual(shapeOf(wide.fields), [['time', 'number'], ['sequence', 'bigint']])
  assert.equal(wide.sequence, 5n)
  assert.equal(typeof compose({ timestampMs: 0, layout: 'time:8,sequence:55;epoch=0' }), 'bigint')
  const info = [
    ['name', 'string'], ['spec', 'string'], ['canonical', 'string'], ['description', 'string'],
    ['fields', 'object'], ['totalBits', 'number'], ['epochMs', 'number'], ['epoch', 'Date'],
    ['unit', 'string'], ['idsPerTick', 'number'], ['idsPerSecond', 'number'],
    ['datacenterIds', 'number'], ['workerIds', 'number'], ['nodeIds', 'number'],
    ['exhaustedAtMs', 'number'], ['timeLeftMs', 'number'], ['unsigned', 'boolean'], ['exhaustedAt', 'Date'],
  ]
  for (const l of layouts()) assert.deepEqual(shapeOf(l), info, l.name)
  const custom = layoutInfoOf('time:55,sequence:8;epoch=0')
  assert.deepEqual(shapeOf(custom), info.map(([k, t]) => [k, k === 'name' || k === 'exhaustedAt' ? 'null' : t]))
  assert.deepEqual(shapeOf(custom.fields[1]), [['name', 'string'], ['kind', 'string'], ['bits', 'number'], ['shift', 'number'], ['default', 'number']])
  assert.deepEqual(shapeOf(layoutInfoOf('v:60=7,sequence:1,time:2;epoch=0').fields[0]), [['name', 'string'], ['kind', 'string'], ['bits', 'number'], ['shift', 'number'], ['default', 'bigint']])
})
