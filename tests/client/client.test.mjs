// The Node binding's Client against real servers that tests/client/test_bindings.py starts
// (their URLs in the environment), and against servers this file starts itself (the same
// `flakery serve` binary, FLAKERY_TEST_BIN) to pause with SIGSTOP and kill with SIGKILL.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

import flakery, { Client, Generator } from '../../index.mjs'
import { assertNoLeak, caught, madeAndClosed } from '../node/memory.mjs'

const servers = process.env.FLAKERY_TEST_SERVERS.split(',')
const tokenServer = process.env.FLAKERY_TEST_TOKEN_SERVER
const dead = process.env.FLAKERY_TEST_DEAD_SERVER
const bin = process.env.FLAKERY_TEST_BIN

function throwsCode(fn, type, code, needle) {
  return checkError(caught(fn), type, code, needle)
}

function checkError(error, type, code, needle) {
  assert.ok(error instanceof type, `threw ${error}`)
  assert.equal(error.code, code, error.message)
  if (needle) assert.ok(error.message.includes(needle), error.message)
  return error
}

async function rejectsCode(promise, type, code, needle) {
  assert.ok(promise instanceof Promise, `not a Promise: ${promise}`)
  return checkError(await promise.then(() => assert.fail('resolved'), (e) => e), type, code, needle)
}

test('a Client has the calls of a Generator, as Promises, and its IDs never repeat', async () => {
  const client = new Client({ servers })
  const seen = new Set()
  for (let i = 0; i < 3000; i++) {
    const id = await client.nextId()
    assert.equal(typeof id, 'bigint')
    assert.ok(id > 0n)
    seen.add(id)
  }
  const batch = await client.nextIds(3000)
  assert.ok(batch instanceof BigInt64Array)
  for (const id of batch) seen.add(id)
  assert.equal(seen.size, 6000)
  assert.match(await client.nextIdString({ format: 'base62' }), /^[0-9A-Za-z]{11}$/)
  assert.match(await client.nextIdString(), /^\d+$/)
  // The calls that never wait: an ID of the stock, or null.
  const held = client.tryNextId()
  assert.ok(held === null || (typeof held === 'bigint' && !seen.has(held)))
  const text = client.tryNextIdString({ format: 'base32' })
  assert.ok(text === null || /^[0-9A-Z]{13}$/.test(text), text)
  const decoded = client.decode(batch[0])
  assert.equal(decoded.id, batch[0])
  assert.equal(client.layout, 'twitter')
  // The calls are bound to the client, as a Generator's are: detached, they still work.
  const next = client.nextId
  assert.ok(!seen.has(await next()))
  assert.deepEqual(client.servers, servers)
  client.close()
  await rejectsCode(client.nextId(), RangeError, 'invalid_argument', 'closed')
  assert.equal(client.tryNextId(), null)
})

test('switching from a Generator to a Client is one line', async () => {
  for (const source of [new Generator({ workerId: 1 }), new Client({ servers: servers.join(',') })]) {
    assert.equal(typeof (await source.nextId()), 'bigint')
    assert.equal((await source.nextIds(2)).length, 2)
    assert.equal(typeof (await source.nextIdString()), 'string')
  }
})

test("a Client's errors carry the client's codes and never the token", async () => {
  const down = new Client({ servers: [dead], timeoutMs: 300, requestTimeoutMs: 300 })
  await rejectsCode(down.nextId(), Error, 'servers_unavailable', dead)
  await rejectsCode(down.nextIds(3), Error, 'servers_unavailable', dead)
  const wrong = new Client({ servers: tokenServer, token: 'wrong-token-node-8a4c' })
  const error = await rejectsCode(wrong.nextIdString(), Error, 'unauthorized', tokenServer)
  assert.ok(!error.message.includes('wrong-token-node-8a4c'))
  const right = new Client({ servers: tokenServer, token: process.env.FLAKERY_TEST_TOKEN })
  assert.ok((await right.nextId()) > 0n)
  // A bad argument throws at once, as a Generator's call does; it never becomes a Promise.
  throwsCode(() => right.nextIds(-1), RangeError, 'invalid_argument')
  throwsCode(() => right.nextIdString({ format: 'hex' }), RangeError, 'invalid_argument')
  throwsCode(() => new Client({ servers: 'ftp://127.0.0.1:1' }), RangeError, 'invalid_argument', 'is not http://host:port')
  throwsCode(() => new Client({ server: servers[0] }), TypeError, 'invalid_argument', "unknown key 'server'")
  throwsCode(() => new Client({ servers: [1] }), TypeError, 'invalid_argument', 'servers[0]')
  // Without `new`, the module's own calls are left as they are.
  const before = flakery.nextId
  throwsCode(() => flakery.Client({ servers }), TypeError, 'invalid_argument', "without 'new'")
  assert.equal(flakery.nextId, before)
})

test('with every server down, the fallback generator gives the IDs', async () => {
  const fallback = new Generator({ datacenterId: 31, workerId: 31 })
  const client = new Client({ servers: [dead], timeoutMs: 300, requestTimeoutMs: 300, fallback })
  const id = await client.nextId()
  const parts = client.decode(id)
  assert.equal(parts.workerId, 31)
  assert.equal(parts.datacenterId, 31)
})

test('a Client closed before its first call refuses every later call', async () => {
  const client = new Client({ servers })
  client.close()
  assert.equal(client.tryNextId(), null)
  assert.equal(client.tryNextIdString(), null)
  await rejectsCode(client.nextId(), RangeError, 'invalid_argument', 'closed')
  await rejectsCode(client.nextIdString(), RangeError, 'invalid_argument', 'closed')
  await rejectsCode(client.nextIds(2), RangeError, 'invalid_argument', 'closed')
  assert.equal(client.tryNextId(), null)
})

// ---------------------------------------------------------------------------------------------
// Servers of this file's own, to pause and kill.

async function freePort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

// A `flakery serve` on a free loopback port with its own worker ID, ready.
async function startServer(t, workerId) {
  assert.ok(bin, 'FLAKERY_TEST_BIN is not set: run tests/client/run.sh')
  const port = await freePort()
  const leases = mkdtempSync(join(tmpdir(), 'node-client-leases-'))
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLAKERY_')))
  const proc = spawn(bin, ['serve', '--listen', `127.0.0.1:${port}`, '--worker-id', String(workerId)], {
    env: { ...env, FLAKERY_LEASE_DIR: leases, FLAKERY_DRAIN_DELAY_MS: '0' },
    stdio: 'ignore',
  })
  // Undone whatever the test does: a stopped process is killed as well.
  t.after(() => {
    proc.kill('SIGKILL')
    rmSync(leases, { recursive: true, force: true })
  })
  const url = `http://127.0.0.1:${port}`
  for (let attempt = 0; attempt < 400; attempt++) {
    assert.equal(proc.exitCode, null, `the server on ${url} exited`)
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return { url, proc }
    } catch {
      // not listening yet
    }
    await sleep(50)
  }
  assert.fail(`the server on ${url} did not come up`)
}

// SIGSTOP is asynchronous: kill() returns once the signal is queued, and the kernel wakes one
// thread of the server to take it, which stops the others only when it runs. Until then a
// thread still running answers a request sent after kill() (on a loaded machine, 2 requests
// in 50; the Rust client's refiller sends one as soon as a call waits). Paused is when every
// thread is stopped (state T in /proc): nothing answers from then on.
async function pause(proc) {
  proc.kill('SIGSTOP')
  const states = () =>
    readdirSync(`/proc/${proc.pid}/task`).map((tid) =>
      readFileSync(`/proc/${proc.pid}/task/${tid}/stat`, 'utf8').split(') ').pop()[0],
    )
  // A failsafe, not a measure: the stop takes as long as a wait for a core.
  for (let poll = 0; poll < 10_000; poll++) {
    if (states().every((state) => state === 'T')) return
    await sleep(1)
  }
  assert.fail(`pid ${proc.pid} did not stop: ${states()}`)
}

// Waits until a request has reached the paused server (unread in a socket's receive queue,
// /proc/net/tcp): the client's refiller sent it, which it does only once a call waits.
// Returns early once `settled()`: a server that answered, and the test says how.
async function requestReached(url, settled) {
  const port = Number(new URL(url).port).toString(16).toUpperCase().padStart(4, '0')
  const unread = () =>
    readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // local address, state (01: established), tx_queue:rx_queue
      .some(([, local, , state, queues]) =>
        local?.endsWith(`:${port}`) && state === '01' && parseInt(queues.split(':')[1], 16) > 0,
      )
  for (let poll = 0; poll < 10_000; poll++) {
    if (unread() || settled()) return
    await sleep(1)
  }
  assert.fail(`no request reached ${url}`)
}

// Takes every ID the client holds, without waiting (a stock of small blocks).
function drain(client) {
  let taken = 0
  while (client.tryNextId() !== null) {
    taken += 1
    assert.ok(taken <= 1000, 'the stock never ran out')
  }
  return taken
}

// Small blocks and no prefetch: the stock runs out after one block, so a call must wait.
const SMALL = { minBlock: 16, maxBlock: 16, prefetch: false }

test('nothing waits on the event loop while every server is paused, then killed', async (t) => {
  const [a, b] = [await startServer(t, 21), await startServer(t, 22)]
  // A request to a paused server hangs until it is killed (its timeout is longer than the
  // pause), so the calls below are still pending when the servers die.
  const client = new Client({ servers: [a.url, b.url], ...SMALL, requestTimeoutMs: 20_000, timeoutMs: 30_000 })
  assert.equal(typeof (await client.nextId()), 'bigint')
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  // The histogram's first tick only starts its clock: a stall before it would go unseen.
  await sleep(50)
  await pause(a.proc)
  await pause(b.proc)
  drain(client)
  const pending = [
    ...Array.from({ length: 8 }, () => client.nextId()),
    client.nextIdString({ format: 'base62' }),
    client.nextIds(100),
  ]
  const settled = new Set()
  pending.forEach((p, i) => p.then(() => settled.add(i), () => settled.add(i)))
  // While the servers are paused, the loop runs: timers fire, and a try never waits.
  for (let i = 0; i < 20; i++) {
    await sleep(50)
    assert.equal(client.tryNextId(), null)
  }
  const settledWhilePaused = settled.size
  a.proc.kill('SIGKILL')
  b.proc.kill('SIGKILL')
  const results = await Promise.allSettled(pending)
  delay.disable()
  const maxMs = delay.max / 1e6
  // The stall is reported, not bounded: on a loaded machine the loop waits for a core as
  // long as any wait of ours (timers alone peaked at 25 ms at load 20). What a wait on the
  // JavaScript thread would change is the order of events: a blocked call settles before the
  // timers above have run, while the servers are still paused.
  t.diagnostic(`event loop delay: max ${maxMs.toFixed(1)} ms, mean ${(delay.mean / 1e6).toFixed(1)} ms, ${delay.count} samples`)
  assert.equal(settledWhilePaused, 0, 'a call settled while every server was paused')
  for (const result of results) {
    assert.equal(result.status, 'rejected')
    checkError(result.reason, Error, 'servers_unavailable', a.url)
  }
})

test('close() rejects the pending Promises at once, and every later call', async (t) => {
  const a = await startServer(t, 23)
  // Without close(), these calls would wait a minute for the paused server.
  const client = new Client({ servers: [a.url], ...SMALL, requestTimeoutMs: 60_000, timeoutMs: 60_000 })
  assert.equal(typeof (await client.nextId()), 'bigint')
  await pause(a.proc)
  drain(client)
  const pending = [client.nextId(), client.nextIdString(), client.nextIds(10)]
  const order = []
  pending.forEach((p) => p.then(() => order.push('resolved'), () => order.push('rejected')))
  // A call waits for a block (close() must wake it); the others may wait or not have started:
  // close() rejects each, whichever.
  await requestReached(a.url, () => order.length > 0)
  order.push('close')
  client.close()
  for (const p of pending) await rejectsCode(p, RangeError, 'invalid_argument', 'closed')
  assert.deepEqual(order, ['close', 'rejected', 'rejected', 'rejected'])
  await rejectsCode(client.nextId(), RangeError, 'invalid_argument', 'closed')
  await rejectsCode(client.nextIds(1), RangeError, 'invalid_argument', 'closed')
  assert.equal(client.tryNextIdString(), null)
})

test('a call pending at close() does not keep the process alive', async (t) => {
  const a = await startServer(t, 24)
  const index = new URL('../../index.mjs', import.meta.url).href
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    import { Client } from ${JSON.stringify(index)}
    const client = new Client({ servers: [${JSON.stringify(a.url)}], minBlock: 16, maxBlock: 16,
      prefetch: false, requestTimeoutMs: 600000, timeoutMs: 600000 })
    await client.nextId()
    process.send('paused?')
    process.once('message', async () => {
      process.disconnect()
      while (client.tryNextId() !== null) {}
      const pending = client.nextId()
      setTimeout(() => client.close(), 100)
      try { await pending; console.log('resolved') } catch (e) { console.log('rejected', e.code) }
    })
  `], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let out = ''
  child.stdout.on('data', (chunk) => (out += chunk))
  await new Promise((resolve) => child.once('message', resolve))
  await pause(a.proc)
  child.send('go')
  // A failsafe, not a measure: without close()'s wake-up the child would wait ten minutes.
  const failsafe = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const [code, signal] = await new Promise((resolve) => child.once('exit', (...r) => resolve(r)))
  clearTimeout(failsafe)
  assert.equal(signal, null, `the child was killed by the failsafe: ${out}`)
  assert.equal(code, 0, out)
  assert.equal(out.trim(), 'rejected invalid_argument')
})

// A call whose IDs were taken on libuv's pool just before close() settles on the JavaScript
// thread after it: it rejects as every call after close() does, and a Promise already settled
// before close() keeps its ID. An order of events: with one pool thread (UV_THREADPOOL_SIZE=1,
// read once, so in a child), the fs.open queued after nextIds(3) starts only once nextIds's
// work has returned with its IDs, and the child calls close() when the opened file exists.
test('a call whose IDs were taken before close() rejects when it settles after it', () => {
  const index = new URL('../../index.mjs', import.meta.url).href
  const dir = mkdtempSync(join(tmpdir(), 'flakery-close-'))
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
    import fs from 'node:fs'
    import { Client } from ${JSON.stringify(index)}
    // One block of 64 that never ages out here: 'early' and 'late' take from it.
    const client = new Client({ servers: ${JSON.stringify(servers)}, prefetch: false,
      minBlock: 64, maxBlock: 64, maxAgeMs: 600000 })
    const events = []
    const settle = (name, p) => p.then((v) => events.push(name + ' resolved ' + typeof v),
      (e) => events.push(name + ' rejected ' + e.code + ' ' + e.message))
    // Settled before close(): the work and its resolution both ran before it.
    await settle('before', client.nextIds(3))
    const early = client.nextId() // from the stock the block left: resolved at once
    const late = client.nextIds(3)
    const marker = ${JSON.stringify(join(dir, 'opened'))}
    fs.open(marker, 'w', (error, fd) => error || fs.close(fd, () => {}))
    // Bounded by a count, not a time: the parent's timeout is the failsafe.
    for (let i = 0; !fs.existsSync(marker); i++) if (i === 1e8) throw new Error('no open')
    events.push('close')
    client.close()
    events.push('closed')
    await settle('early', early)
    await settle('late', late)
    console.log(JSON.stringify(events))
  `], { env: { ...process.env, UV_THREADPOOL_SIZE: '1' }, encoding: 'utf8', timeout: 120_000 })
  rmSync(dir, { recursive: true, force: true })
  assert.equal(child.status, 0, `the child failed: ${child.stderr}`)
  assert.deepEqual(JSON.parse(child.stdout), [
    'before resolved object',
    'close',
    'closed',
    'early resolved bigint',
    'late rejected invalid_argument the client is closed',
  ])
})

test("a Client's calls leak nothing", async (t) => {
  // Blocks of at most 10,000 IDs (80 kB): the stock's own size, which varies by a block
  // between rounds, stays well under the bound.
  const client = new Client({ servers, minBlock: 1000, maxBlock: 10_000 })
  const closed = new Client({ servers })
  closed.close()
  t.diagnostic(
    await assertNoLeak({
      nextId: () => client.nextId(),
      nextIdString: () => client.nextIdString({ format: 'base62' }),
      nextIds: () => client.nextIds(2),
      tryNextId: () => client.tryNextId(),
      tryNextIdString: () => client.tryNextIdString(),
      decode: () => client.decode(1541815603606036480n),
      'new Client + close': madeAndClosed(() => new Client({ servers }).close()),
      'a closed client rejecting': () => closed.nextId().catch((e) => e),
      'a bad count': () => caught(() => client.nextIds(-1)),
    }),
  )
  client.close()
})
