// The process-wide generator is one per process: worker threads share it, so their IDs
// never collide.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'

import { decode, nextId } from 'flakery'

const PER_WORKER = 100_000
const WORKERS = 4

// Each worker makes its IDs one nextId() at a time (half through require, half through
// import), and sends them back as a BigInt64Array.
const source = `
  const { parentPort, workerData } = require('node:worker_threads')
  ;(async () => {
    const viaRequire = require('flakery')
    const viaImport = await import('flakery')
    if (viaImport.nextId !== viaRequire.nextId) throw new Error('two modules in one worker')
    const ids = new BigInt64Array(workerData.count)
    for (let i = 0; i < ids.length; i++) ids[i] = (i % 2 ? viaImport : viaRequire).nextId()
    parentPort.postMessage(ids, [ids.buffer])
  })()
`

function runWorker(count) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { count } })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
  })
}

test(`${WORKERS} worker threads x ${PER_WORKER.toLocaleString('en')} IDs: all distinct`, async () => {
  const first = nextId()
  const results = await Promise.all(Array.from({ length: WORKERS }, () => runWorker(PER_WORKER)))
  const last = nextId()
  const seen = new Set()
  for (const ids of results) {
    assert.equal(ids.length, PER_WORKER)
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'increasing within a thread')
    for (const id of ids) {
      assert.ok(id > first && id < last, 'between the main thread IDs before and after')
      seen.add(id)
    }
  }
  assert.equal(seen.size, WORKERS * PER_WORKER, 'no ID twice')
  // One generator: the same node identity in every thread.
  const node = (id) => {
    const d = decode(id)
    return `${d.datacenterId}/${d.workerId}`
  }
  for (const ids of results) assert.equal(node(ids[0]), node(first))
})

function exitCode(worker) {
  return new Promise((resolve, reject) => {
    worker.once('error', reject)
    worker.once('exit', resolve)
  })
}

test('workers that end holding Generators and bound methods do not crash the process', async () => {
  const setup = `
    const { Generator, nextId } = require('flakery')
    const kept = []
    for (let i = 0; i < 100; i++) {
      const g = new Generator({ workerId: i % 32 })
      kept.push(g.nextId, g)
    }
    nextId()
  `
  // One ends by itself (its environment is torn down with everything still referenced) ...
  assert.equal(await exitCode(new Worker(setup, { eval: true })), 0)
  // ... one is terminated in the middle of generating.
  const busy = new Worker(
    `${setup}
    require('node:worker_threads').parentPort.postMessage('busy')
    for (;;) kept[0]()`,
    { eval: true },
  )
  const ended = exitCode(busy)
  await new Promise((resolve) => busy.once('message', resolve))
  await busy.terminate()
  assert.equal(await ended, 1)
  assert.equal(typeof nextId(), 'bigint')
})
