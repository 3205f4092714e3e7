// Database leases through the Node API: the option's validation, and a real lease against
// MariaDB started by tests/db/dbserver.py. In CI a missing server is a failure, never a skip.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { inspect } from 'node:util'

import { Generator } from 'flakery'

const SECRET = 's3cr3t-bindings2-pw'
const harness = join(dirname(fileURLToPath(import.meta.url)), '..', 'db', 'dbserver.py')
const installed = existsSync('/usr/sbin/mariadbd')
if (!installed && process.env.CI === 'true') {
  throw new Error('MariaDB is not installed, and CI=true: no test may be skipped')
}
const skip = installed ? false : '!!! MariaDB is not installed: database lease tests SKIPPED !!!'
let server

before(() => {
  if (!skip) server = JSON.parse(execFileSync('python3', [harness, 'start', 'mariadb']).toString())
})
after(() => {
  if (server) execFileSync('python3', [harness, 'stop', server.dir])
})

const invalid = (what) => (err) =>
  err.code === 'invalid_argument' && err.message.includes(what) && !err.message.includes(SECRET)

test('a database URL of another scheme is invalid_argument, its password not shown', () => {
  for (const url of [`redis://flakery:${SECRET}@127.0.0.1:6379/0`, `flakery:${SECRET}@127.0.0.1/db`]) {
    assert.throws(() => new Generator({ databaseUrl: url }), invalid('database URL'))
  }
})

test('an unknown database mode is invalid_argument', () => {
  assert.throws(
    () => new Generator({ databaseUrl: `mysql://u:${SECRET}@127.0.0.1:1/db`, databaseMode: 'leaf' }),
    invalid("'leaf'"),
  )
})

test('two generators lease distinct node IDs from MariaDB', { skip }, () => {
  const options = { databaseUrl: server.url, layout: 'time:41,worker:10,sequence:12;epoch=0' }
  const first = new Generator(options)
  const second = new Generator(options)
  try {
    assert.equal(first.source, 'database')
    assert.equal(second.source, 'database')
    assert.notEqual(first.workerId, second.workerId)
    for (const g of [first, second]) assert.ok(!inspect(g).includes(server.password))
    const ids = new Set([...first.nextIds(1000), ...second.nextIds(1000)])
    assert.equal(ids.size, 2000)
  } finally {
    first.close()
    second.close()
  }
})

test('a wrong password: coordinator_unavailable naming the host, never the password', { skip }, () => {
  const url = server.url.replace(server.password, SECRET)
  assert.throws(
    () => new Generator({ databaseUrl: url }),
    (err) =>
      err.code === 'coordinator_unavailable' &&
      err.message.includes('127.0.0.1') &&
      !err.message.includes(SECRET) &&
      !inspect(err).includes(SECRET),
  )
})
