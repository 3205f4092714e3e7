// Native memory: every public function and method of the package, its error paths included,
// called 100,000 times a round, leaves the process's resident memory bounded
// (tests/node/memory.mjs). A Client's calls that need a server are checked in
// tests/client/client.test.mjs, against real servers.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import {
  Client,
  Generator,
  compose,
  decode,
  fromBase32,
  fromBase62,
  layoutInfoOf,
  layouts,
  nextId,
  nextIdString,
  nextIds,
  toBase32,
  toBase62,
} from 'flakery'

import { assertNoLeak, caught, loopsRun, madeAndClosed } from './memory.mjs'

const ID = 1541815603606036480n

test('the module-level calls leak nothing', async (t) => {
  t.diagnostic(
    await assertNoLeak({
      nextId: () => nextId(),
      nextIdString: () => nextIdString(),
      'nextIdString base62': () => nextIdString({ format: 'base62' }),
      nextIds: () => nextIds(4),
    }),
  )
})

test("a Generator's calls leak nothing", async (t) => {
  const g = new Generator({ workerId: 7, datacenterId: 3 })
  t.diagnostic(
    await assertNoLeak({
      'Generator.create': () => Generator.create({ workerId: 2 }),
      nextId: () => g.nextId(),
      nextIdString: () => g.nextIdString({ format: 'base32' }),
      nextIds: () => g.nextIds(4),
      getters: () => g.layout + g.datacenterId + g.workerId + g.source + g.closed,
    }),
  )
  g.close()
})

// `new Generator` made in a loop leaves closed generators for V8's finalizers to free when it
// collects at will. The core's fork list kept an entry for each, pruned only when full, and
// with it each dead one's fence allocated: native memory grew with the peak awaiting
// finalization (0.5 to 1.5 MB a round here). It now keeps the open generators only.
test('making a Generator with new and closing it leaks nothing', async (t) => {
  t.diagnostic(await assertNoLeak({ 'new Generator + close': madeAndClosed(() => new Generator({ workerId: 1 }).close()) }))
})

test('decode, compose, layouts and the text forms leak nothing', async (t) => {
  const base32 = toBase32(ID)
  const base62 = toBase62(ID)
  t.diagnostic(
    await assertNoLeak({
      decode: () => decode(ID),
      'decode with a layout': () => decode(String(ID), { layout: 'sonyflake' }),
      compose: () => compose({ timestampMs: 1_700_000_000_000, workerId: 1, layout: 'twitter' }),
      layouts: () => layouts(),
      layoutInfoOf: () => layoutInfoOf('time:41,worker:10,sequence:12;epoch=1288834974657'),
      toBase32: () => toBase32(ID),
      toBase62: () => toBase62(ID),
      fromBase32: () => fromBase32(base32),
      fromBase62: () => fromBase62(base62),
    }),
  )
})

test('every kind of error leaks nothing', async (t) => {
  const closed = new Generator({ workerId: 9 })
  closed.close()
  t.diagnostic(
    await assertNoLeak({
      TypeError: () => caught(() => decode({})),
      'RangeError invalid_layout': () => caught(() => layoutInfoOf('time:41,nope:3')),
      'RangeError of an option': () => caught(() => new Generator({ workerId: 1 << 20 })),
      'unknown key': () => caught(() => new Generator({ wrokerId: 1 })),
      'bad text': () => caught(() => fromBase62('!!!!!!!!!!!')),
      'compose out of range': () => caught(() => compose({ timestampMs: 0, sequence: 1 << 20 })),
      lease_lost: () => caught(() => closed.nextId()),
      'a Client refused': () => caught(() => new Client({ servers: 'ftp://127.0.0.1:1' })),
      'Generator.create rejected': () => Generator.create({ workerId: 1 << 20 }).catch((e) => e),
    }),
  )
})

test("a Client's calls that need no server leak nothing", async (t) => {
  const client = new Client({ servers: 'http://127.0.0.1:1,http://127.0.0.1:2' })
  t.diagnostic(
    await assertNoLeak({
      'new Client + close': madeAndClosed(() => new Client({ servers: ['http://127.0.0.1:1'], layout: 'discord' }).close()),
      decode: () => client.decode(ID),
      getters: () => client.layout + client.servers.length,
      tryNextId: () => client.tryNextId(),
      tryNextIdString: () => client.tryNextIdString({ format: 'base32' }),
    }),
  )
  client.close()
  assert.equal(client.tryNextId(), null)
})

// Export coverage: every export of the package, and every public member of its classes, is
// called by one of the loops above (read from the loops' own source, as assertNoLeak ran
// them), or named here with the reason it has no loop in this file. A new export without a
// loop fails this test until it gets one or an exemption.
const EXEMPT = {
  default: 'the CommonJS module itself, whose members are the named exports checked here',
  doctor: 'looped in a PID namespace of its own in tests/node/doctor.test.mjs (its report reads every process in /proc)',
  'Client.nextId': 'needs a server: looped against real servers in tests/client/client.test.mjs',
  'Client.nextIdString': 'needs a server: looped against real servers in tests/client/client.test.mjs',
  'Client.nextIds': 'needs a server: looped against real servers in tests/client/client.test.mjs',
}

// An instance of each class: a Client binds its generating calls to each instance.
const INSTANCES = {
  Generator: (Generator) => new Generator({ workerId: 5 }),
  Client: (Client) => new Client({ servers: 'http://127.0.0.1:1' }),
}

// `Generator`, `Generator.create`, `Client.decode`: what a loop must mention to cover each; a
// class's statics, its prototype's members and its instances' own.
function publicNames(pkg) {
  const names = []
  for (const [name, value] of Object.entries(pkg)) {
    names.push(name)
    if (typeof value !== 'function' || !/^[A-Z]/.test(name)) continue
    assert.ok(name in INSTANCES, `no instance of the exported class ${name} in INSTANCES`)
    const instance = INSTANCES[name](value)
    const members = new Set()
    for (const owner of [value, value.prototype, instance]) {
      for (const member of Object.getOwnPropertyNames(owner)) members.add(member)
    }
    instance.close()
    for (const member of members) {
      if (!['length', 'name', 'prototype', 'constructor', 'arguments', 'caller'].includes(member)) names.push(`${name}.${member}`)
    }
  }
  return names
}

test('every export and class member has a leak loop or a reason it has none', async () => {
  const pkg = await import('flakery')
  const names = publicNames(pkg)
  assert.ok(names.includes('Generator.create') && names.includes('Client.tryNextId'), `read no class members: ${names}`)
  // An export by its name (`decode(`), a member as a property (`.decode(`, `.layout`).
  const mentions = (pattern) => loopsRun.some((source) => new RegExp(pattern).test(source))
  const uncovered = names.filter((name) => {
    const [, member] = name.split('.')
    return !(name in EXEMPT) && !mentions(member === undefined ? `\\b${name}\\b` : `\\.${member}\\b`)
  })
  assert.deepEqual(uncovered, [], `exports with no leak loop in tests/node/leaks.test.mjs, nor a reason in EXEMPT: ${uncovered.join(', ')}`)
  const stale = Object.keys(EXEMPT).filter((name) => !names.includes(name))
  assert.deepEqual(stale, [], `EXEMPT names what the package no longer exports: ${stale.join(', ')}`)
})
