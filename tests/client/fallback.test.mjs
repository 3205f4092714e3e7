// The Node binding's Client with a fallback on a server's node ID, and close(), against the
// real server that tests/client/test_fallback_surfaces.py starts (datacenter 0, worker 11):
// the client core's refusal and closed client reach Node as errors with code
// 'invalid_argument'. Each call is awaited, so the test holds whether a call answers at once
// or with a Promise.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { Client, Generator } from '../../index.mjs'

const server = process.env.FLAKERY_TEST_FALLBACK_SERVER
// The message names the fields as Node spells them (the option table's names).
const named = '(datacenterId 0, workerId 11)'

async function failsWith(call, needle) {
  let caught
  try {
    await call()
  } catch (error) {
    caught = error
  }
  assert.ok(caught instanceof Error, `answered instead of failing: ${caught}`)
  assert.equal(caught.code, 'invalid_argument', caught.message)
  assert.ok(caught.message.includes(needle), caught.message)
}

test("a fallback on a server's node ID is refused, every call", async () => {
  const fallback = new Generator({ datacenterId: 0, workerId: 11 })
  const client = new Client({ servers: server, fallback })
  await failsWith(() => client.nextId(), named)
  await failsWith(() => client.nextIds(3), named)
  await failsWith(() => client.nextId(), 'fallback')
  await client.close()
})

test('a client closed before its first call hands out nothing', async () => {
  const client = new Client({ servers: server })
  await client.close()
  await failsWith(() => client.nextId(), 'closed')
  await failsWith(() => client.nextIds(2), 'closed')
})
