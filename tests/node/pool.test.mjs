// A waiting Client call holds one of libuv's pool threads until it settles (docs/node.md, the
// Client): with the default 4 threads, 4 calls waiting on an unanswering server hold a `stat`
// back until the first of them fails; with UV_THREADPOOL_SIZE=5, as the docs advise, the
// `stat` is answered while they wait. An order of events, in a child process each, since
// libuv reads UV_THREADPOOL_SIZE once, at the pool's first use.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const WAITING = 4

// Queues WAITING calls on an empty stock (each an AsyncTask on the pool, queued in order),
// then a stat; prints the order in which they settled.
const CHILD = `
import net from 'node:net'
import fs from 'node:fs'
import { Client } from 'flakery'

const sockets = []
const silent = net.createServer((socket) => sockets.push(socket)) // accepts, never answers
await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
const client = new Client({ servers: 'http://127.0.0.1:' + silent.address().port, timeoutMs: 3000 })
const events = []
const calls = Array.from({ length: ${WAITING} }, () =>
  client.nextId().then(() => events.push('id'), (error) => events.push(error.code)))
const stat = new Promise((resolve) => fs.stat(process.execPath, () => resolve(events.push('stat'))))
await Promise.all([...calls, stat])
client.close()
for (const socket of sockets) socket.destroy()
silent.close()
console.log(JSON.stringify(events))
`

function settled(threads) {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], {
    cwd: ROOT,
    env: { ...process.env, UV_THREADPOOL_SIZE: String(threads) },
    encoding: 'utf8',
    timeout: 60_000, // a hung child fails the test instead of the run
  })
  assert.equal(child.status, 0, `the child failed: ${child.stderr}`)
  const events = JSON.parse(child.stdout)
  assert.equal(events.length, WAITING + 1, child.stdout)
  // Nothing answers: every call fails with the client's code, none resolves.
  assert.deepEqual(events.filter((e) => e !== 'stat'), Array(WAITING).fill('servers_unavailable'), child.stdout)
  return events
}

test(`${WAITING} waiting Client calls hold every thread of a pool of ${WAITING}`, () => {
  const events = settled(WAITING)
  assert.ok(events.indexOf('stat') > 0, `the stat was answered before any waiting call settled: ${events}`)
})

test('one more pool thread (UV_THREADPOOL_SIZE) answers other work while they wait', () => {
  const events = settled(WAITING + 1)
  assert.equal(events[0], 'stat', `the stat waited for the Client's calls: ${events}`)
})
