// ZooKeeper leases through the Node API, against a real server started by
// tests/zookeeper/zkserver.py. In CI a missing ZooKeeper is a failure, never a skip.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { existsSync, readFileSync } from 'node:fs'
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

// Established TCP connections whose far end is the given port (a client's side).
function connectionsTo(port) {
  let count = 0
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      if (fields.length > 3 && parseInt(fields[2].split(':').pop(), 16) === port && fields[3] === '01') {
        count++
      }
    }
  }
  return count
}

// The child holds one of a 1-bit namespace's two node IDs, drops its generator (no close())
// and runs the collector while the server is paused, then stays alive.
const dropper = `
const { Generator } = require(process.env.FLAKERY_PACKAGE)
const lines = require('node:readline').createInterface({ input: process.stdin })
let generator = new Generator(JSON.parse(process.env.DROP_OPTIONS))
generator.nextIds(10)
console.log(generator.workerId)
let collected = false
const registry = new FinalizationRegistry(() => { collected = true })
registry.register(generator, 'generator')
lines.on('line', async (line) => {
  if (line === 'drop') {
    generator = null
    // Until the collector has taken the generator (and a few turns more, for the addon's
    // finalizer, which Node runs after the collection).
    for (let turns = 0; !collected || turns < 5; turns++) {
      global.gc()
      await new Promise((resolve) => setImmediate(resolve))
    }
    console.log('dropped')
  } else {
    process.exit(0)
  }
})
`

test('a dropped generator returns while ZooKeeper is paused, and its node ID is released after', { skip, timeout: 120000 }, async () => {
  // A long session: without the release, the child would hold its node ID all the while.
  const options = {
    zookeeper: server.connect,
    namespace: 'node-drop',
    layout: 'time:41,worker:1,sequence:12;epoch=1288834974657',
    sessionTimeoutMs: 20000,
  }
  const child = spawn(process.execPath, ['--expose-gc', '-e', dropper], {
    env: {
      ...process.env,
      FLAKERY_PACKAGE: join(dirname(fileURLToPath(import.meta.url)), '..', '..'),
      DROP_OPTIONS: JSON.stringify(options),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () => (await lines.next()).value
  const held = new Generator(options)
  try {
    const dropped = Number(await next())
    assert.notEqual(held.workerId, dropped)
    execFileSync('python3', [harness, 'pause', String(server.pid)])
    try {
      child.stdin.write('drop\n')
      // The child's JavaScript thread ran on after the collector took the generator while
      // the server could answer nothing (a drop that waited for the release to be answered
      // would never return), and its client (beside this process's) is still connected,
      // its release pending. That a drop does not wait at all, not even a bounded time, is
      // checked on the lease's clock in core/tests/stuck_lease.rs.
      assert.equal(await next(), 'dropped')
      assert.equal(connectionsTo(server.port), 2, "the dropped generator's client was torn down")
    } finally {
      execFileSync('python3', [harness, 'resume', String(server.pid)])
    }
    // The release is carried in the background: the node ID comes free while the child
    // lives (it would hold it for its whole session had the drop released nothing).
    let again
    while (!again) {
      assert.equal(child.exitCode, null, 'the child exited before its node ID came free')
      try {
        again = new Generator(options)
      } catch (err) {
        assert.equal(err.code, 'worker_ids_exhausted')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    assert.equal(again.workerId, dropped)
    again.close()
  } finally {
    held.close()
    child.stdin.write('exit\n')
  }
})
