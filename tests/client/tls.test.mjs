// The Node binding's Client over TLS against servers that tests/client/test_tls.py starts
// (their URLs, the CA file and the first server's PID in the environment): IDs with the CA
// as an option while the first server is killed midway, written to FLAKERY_TEST_TLS_OUT; a
// server of mutual TLS without a client certificate (`tls_failed`); a token over http:// to a
// host that is not loopback, refused when built.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'

import { Client } from '../../index.mjs'

const env = process.env

test('IDs over TLS from two servers, the first killed midway', async () => {
  // Blocks of 100 asked for when needed, the first server first: the second half asks the
  // killed server, then the other.
  const options = { serverCa: env.FLAKERY_TEST_TLS_CA, preferFirst: true, prefetch: false, minBlock: 100, maxBlock: 100 }
  const client = new Client({ servers: env.FLAKERY_TEST_TLS_SERVERS, ...options })
  const first = await client.nextIds(500)
  process.kill(Number(env.FLAKERY_TEST_TLS_KILL), 'SIGKILL')
  const second = await client.nextIds(500)
  client.close()
  writeFileSync(env.FLAKERY_TEST_TLS_OUT, [...first, ...second].map((id) => `${id}\n`).join(''))
})

test('mutual TLS without a client certificate fails with tls_failed', async () => {
  const client = new Client({ servers: env.FLAKERY_TEST_TLS_MTLS_SERVER, serverCa: env.FLAKERY_TEST_TLS_CA })
  const error = await client.nextId().then(() => assert.fail('resolved'), (e) => e)
  assert.equal(error.code, 'tls_failed', error.message)
  assert.ok(error.message.includes('no client certificate'), error.message)
  client.close()
})

test('a token in clear to a host that is not loopback is refused', () => {
  let error
  try {
    new Client({ servers: 'http://10.0.0.1:9', token: 's3cret-node' }) // eslint-disable-line no-new
  } catch (e) {
    error = e
  }
  assert.ok(error instanceof RangeError, `threw ${error}`)
  assert.equal(error.code, 'invalid_argument')
  assert.ok(error.message.includes('sendTokenInClear'), error.message)
  assert.ok(!error.message.includes('s3cret-node'), error.message)
})
