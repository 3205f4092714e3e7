// The Node binding's Client against real servers that tests/client/test_bindings.py starts
// (their URLs in the environment).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import flakery, { Client, Generator } from '../../index.mjs'

const servers = process.env.FLAKERY_TEST_SERVERS.split(',')
const tokenServer = process.env.FLAKERY_TEST_TOKEN_SERVER
const dead = process.env.FLAKERY_TEST_DEAD_SERVER

function throwsCode(fn, type, code, needle) {
  let caught
  try {
    fn()
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof type, `threw ${caught}`)
  assert.equal(caught.code, code, caught.message)
  if (needle) assert.ok(caught.message.includes(needle), caught.message)
  return caught
}

test('a Client has the calls of a Generator and its IDs never repeat', () => {
  const client = new Client({ servers })
  const seen = new Set()
  for (let i = 0; i < 3000; i++) {
    const id = client.nextId()
    assert.equal(typeof id, 'bigint')
    assert.ok(id > 0n)
    seen.add(id)
  }
  const batch = client.nextIds(3000)
  assert.ok(batch instanceof BigInt64Array)
  for (const id of batch) seen.add(id)
  assert.equal(seen.size, 6000)
  const text = client.nextIdString({ format: 'base62' })
  assert.match(text, /^[0-9A-Za-z]{11}$/)
  assert.match(client.nextIdString(), /^\d+$/)
  const decoded = client.decode(batch[0])
  assert.equal(decoded.id, batch[0])
  assert.equal(client.layout, 'twitter')
  // The hot calls are bound to the client, as a Generator's are: detached, they still work.
  const next = client.nextId
  assert.ok(!seen.has(next()))
  assert.deepEqual(client.servers, servers)
  client.close()
  throwsCode(() => client.nextId(), RangeError, 'invalid_argument', 'closed')
})

test('switching from a Generator to a Client is one line', () => {
  for (const source of [new Generator({ workerId: 1 }), new Client({ servers: servers.join(',') })]) {
    assert.equal(typeof source.nextId(), 'bigint')
    assert.equal(source.nextIds(2).length, 2)
    assert.equal(typeof source.nextIdString(), 'string')
  }
})

test("a Client's errors carry the client's codes and never the token", () => {
  const down = new Client({ servers: [dead], timeoutMs: 300, requestTimeoutMs: 300 })
  throwsCode(() => down.nextId(), Error, 'servers_unavailable', dead)
  const wrong = new Client({ servers: tokenServer, token: 'wrong-token-node-8a4c' })
  const error = throwsCode(() => wrong.nextId(), Error, 'unauthorized', tokenServer)
  assert.ok(!error.message.includes('wrong-token-node-8a4c'))
  const right = new Client({ servers: tokenServer, token: process.env.FLAKERY_TEST_TOKEN })
  assert.ok(right.nextId() > 0n)
  throwsCode(() => new Client({ servers: 'https://127.0.0.1:1' }), RangeError, 'invalid_argument', 'https')
  throwsCode(() => new Client({ server: servers[0] }), TypeError, 'invalid_argument', "unknown key 'server'")
  throwsCode(() => new Client({ servers: [1] }), TypeError, 'invalid_argument', 'servers[0]')
  // Without `new`, the module's own calls are left as they are.
  const before = flakery.nextId
  throwsCode(() => flakery.Client({ servers }), TypeError, 'invalid_argument', "without 'new'")
  assert.equal(flakery.nextId, before)
})

test('with every server down, the fallback generator gives the IDs', () => {
  const fallback = new Generator({ datacenterId: 31, workerId: 31 })
  const client = new Client({ servers: [dead], timeoutMs: 300, requestTimeoutMs: 300, fallback })
  const id = client.nextId()
  const parts = client.decode(id)
  assert.equal(parts.workerId, 31)
  assert.equal(parts.datacenterId, 31)
})
