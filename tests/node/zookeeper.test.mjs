// ZooKeeper leases through the Node API, against a real server started by
// tests/zookeeper/zkserver.py. In CI a missing ZooKeeper is a failure, never a skip.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'

import { Generator } from 'flakery'

const harness = join(dirname(fileURLToPath(import.meta.url)), '..', 'zookeeper', 'zkserver.py')
const installed = existsSync('/usr/share/java/zookeeper.jar')
if (!installed && process.env.CI === 'true') {
  throw new Error('ZooKeeper is not installed, and CI=true: no test may be skipped')
}
const skip = installed ? false : '!!! ZooKeeper is not installed: ZooKeeper tests SKIPPED !!!'
let server

before(() => {
  if (!skip) server = JSON.parse(execFileSync('python3', [harness, 'start']).toString())
})
after(() => {
  if (server) execFileSync('python3', [harness, 'stop', String(server.pid), server.dir])
})

test('generators lease distinct node IDs from ZooKeeper and give them back on close()', { skip }, () => {
  const options = { zookeeper: server.connect, namespace: 'node-api', sessionTimeoutMs: 4000 }
  const first = new Generator(options)
  const second = new Generator(options)
  assert.equal(first.source, 'zookeeper')
  assert.notEqual(first.workerId, second.workerId)
  const ids = new Set([...first.nextIds(5000), ...second.nextIds(5000)])
  assert.equal(ids.size, 10000)
  const taken = first.workerId
  first.close()
  assert.throws(() => first.nextId(), (err) => err.code === 'lease_lost')
  const third = new Generator(options)
  assert.equal(third.workerId, taken) // free again at once
  second.close()
  third.close()
})

test('a 2-bit namespace: the fifth holder gets worker_ids_exhausted', { skip }, () => {
  const options = {
    zookeeper: server.connect,
    namespace: 'node-exhausted',
    layout: 'time:41,worker:2,sequence:12;epoch=1288834974657',
    sessionTimeoutMs: 4000,
  }
  const held = [0, 1, 2, 3].map(() => new Generator(options))
  assert.throws(() => new Generator(options), (err) => err.code === 'worker_ids_exhausted')
  for (const g of held) g.close()
})

test('ZooKeeper down at start: coordinator_unavailable naming the address', { skip }, () => {
  const address = execFileSync('python3', [harness, 'closed-port']).toString().trim()
  assert.throws(
    () => new Generator({ zookeeper: address, sessionTimeoutMs: 2000 }),
    (err) => err.code === 'coordinator_unavailable' && err.message.includes(address),
  )
})

test('Generator.create claims off the JavaScript thread: it runs on while ZooKeeper is paused', { skip }, async () => {
  const options = { zookeeper: server.connect, namespace: 'node-create', sessionTimeoutMs: 4000 }
  let settled = false
  let made
  execFileSync('python3', [harness, 'pause', String(server.pid)])
  try {
    made = Generator.create(options).finally(() => {
      settled = true
    })
    // A callback of the event loop runs while the claim waits for the paused server.
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(settled, false, 'the promise settled before the server could answer')
  } finally {
    execFileSync('python3', [harness, 'resume', String(server.pid)])
  }
  const generator = await made
  assert.ok(generator instanceof Generator)
  assert.equal(generator.source, 'zookeeper')
  const next = generator.nextId
  assert.ok(next() < generator.nextId())
  generator.close()
  assert.equal(generator.closed, true)
})

test('Generator.create rejects with the core error; a bad option throws at once', { skip }, async () => {
  const address = execFileSync('python3', [harness, 'closed-port']).toString().trim()
  await assert.rejects(
    Generator.create({ zookeeper: address, sessionTimeoutMs: 2000 }),
    (err) => err instanceof Error && err.code === 'coordinator_unavailable' && err.message.includes(address),
  )
  assert.throws(() => Generator.create({ workerID: 1 }), (err) => err instanceof TypeError)
})
