'use strict'
// flakery beside the Node ID libraries a user would otherwise pick (run by bench/run.sh).
//
//   node bench/node/bench.cjs --out results.json [--smoke]
//
// flakery is loaded from the repository root (the package built there by `npm install`); the
// peers from bench/node/node_modules. Every generator is measured the same way:
// - per call: bursts of at most 1,000 calls (500 for nodejs-snowflake, whose layout has 1,024
//   per ms) started right after a millisecond boundary, so no layout runs out of sequence
//   numbers inside a burst; the median over the bursts of ns per call;
// - sustained: a plain loop of calls for one second, IDs per second;
// - batch: one batch of 1,000,000 IDs (the library's batch call, else a loop into an Array) in
//   a fresh child process, best of 3, with the growth of the process's peak RSS;
// and the IDs made are checked: duplicates, order, and how far ahead of the clock they run.
// No two-thread figure: worker_threads share no generator object.

const path = require('node:path')
const crypto = require('node:crypto')
const os = require('node:os')
const { spawnSync } = require('node:child_process')

const ROOT = path.resolve(__dirname, '../..')
const TWITTER_EPOCH_MS = 1288834974657n
const TWITTER_CEILING = 4096000
const TWITTER_LAYOUT = 'time 41 | datacenter 5 | worker 5 | sequence 12, 1 ms'

const twitterMs = (id) => Number((id >> 22n) + TWITTER_EPOCH_MS)
const uuidMs = (id) => Number(id >> 80n)
const uuidToBig = (s) => BigInt('0x' + s.replace(/-/g, ''))

function loadFlakery() {
  try {
    const pkg = require(path.join(ROOT, 'package.json'))
    if (pkg.name !== 'flakery') return { error: `the package.json at ${ROOT} is not flakery's` }
    const flakery = require(ROOT)
    flakery.nextId()
    return { flakery, version: pkg.version }
  } catch (e) {
    return { error: String(e && e.message ? e.message.split('\n')[0] : e) }
  }
}

function peerVersion(name) {
  try {
    return require(path.join(__dirname, 'node_modules', name, 'package.json')).version
  } catch (e) {
    return '?'
  }
}

// One generator: make(), one(g) -> the function a call times, user(g) -> what a user's loop
// calls (may retry), batch(g, n) where the library has a batch call, toBig(id) -> BigInt.
function peers(skipped) {
  const out = []
  const fl = loadFlakery()
  if (fl.flakery) {
    const { flakery } = fl
    out.push({
      key: 'flakery-nextId', name: 'flakery nextId()', library: 'flakery', version: fl.version, flakery: true,
      config: 'the process-wide generator (twitter, wait; node ID from the environment or a host-local lease); batch: nextIds(n)',
      layout: TWITTER_LAYOUT, ceiling: TWITTER_CEILING,
      make: () => null, one: () => flakery.nextId, batch: (_, n) => flakery.nextIds(n), batchApi: 'nextIds(n) (BigInt64Array)',
      toBig: (x) => x, ts: twitterMs,
      note: "wait: when a millisecond's 4,096 sequence numbers are used up it waits for the next",
    })
    out.push({
      key: 'flakery-borrow', name: 'flakery Generator (borrow)', library: 'flakery', version: fl.version, flakery: true,
      config: "new Generator({ workerId: 1, sequencePolicy: 'borrow', maxBorrowMs: 86400000 }); batch: g.nextIds(n)",
      layout: TWITTER_LAYOUT, ceiling: TWITTER_CEILING,
      make: () => new flakery.Generator({ workerId: 1, sequencePolicy: 'borrow', maxBorrowMs: 86400000 }),
      one: (g) => () => g.nextId(), batch: (g, n) => g.nextIds(n), batchApi: 'g.nextIds(n) (BigInt64Array)',
      toBig: (x) => x, ts: twitterMs,
      note: "borrow: takes the next millisecond's sequence numbers when one runs out, up to maxBorrowMs ahead of the clock",
    })
  } else {
    skipped.push({ key: 'flakery', reason: `flakery for Node is not built at the repository root (${fl.error}); run npm install there` })
    console.error(`!!!!!!!! flakery for Node is not available, skipped: ${fl.error} !!!!!!!!`)
  }
  const tryPeer = (name, build) => {
    try {
      out.push({ version: peerVersion(name), flakery: false, ...build(require(name)) })
    } catch (e) {
      skipped.push({ key: name, reason: String(e.message).split('\n')[0] })
    }
  }
  tryPeer('@sapphire/snowflake', ({ Snowflake }) => ({
    key: 'sapphire-snowflake', name: '@sapphire/snowflake', library: '@sapphire/snowflake',
    config: 'new Snowflake(1288834974657n).generate() (defaults: worker 0, process 1)',
    layout: 'time 42 | worker 5 | process 5 | increment 12, 1 ms', ceiling: TWITTER_CEILING,
    make: () => new Snowflake(TWITTER_EPOCH_MS), one: (g) => () => g.generate(),
    toBig: (x) => x, ts: twitterMs,
    note: 'its 12-bit increment wraps without waiting for the next millisecond: above 4,096 calls a millisecond it repeats IDs',
  }))
  tryPeer('nodejs-snowflake', ({ Snowflake }) => ({
    key: 'nodejs-snowflake', name: 'nodejs-snowflake', library: 'nodejs-snowflake',
    config: 'new Snowflake({ custom_epoch: 1288834974657, instance_id: 1 }).getUniqueID()',
    layout: 'time 42 | instance 12 | sequence 10, 1 ms', ceiling: 1024000, burst: 500,
    make: () => new Snowflake({ custom_epoch: Number(TWITTER_EPOCH_MS), instance_id: 1 }),
    one: (g) => () => g.getUniqueID(), toBig: (x) => BigInt(x), ts: twitterMs,
    note: 'WebAssembly; a 10-bit sequence: at most 1,024 IDs a millisecond, so bursts of 500',
  }))
  tryPeer('flake-idgen', (FlakeId) => ({
    key: 'flake-idgen', name: 'flake-idgen', library: 'flake-idgen',
    config: 'new FlakeId({ id: 1, epoch: 1288834974657 }).next() -> 8-byte Buffer; a user\'s loop retries the throw when a ms runs out',
    layout: 'time 42 | datacenter 5 | worker 5 | counter 12, 1 ms', ceiling: TWITTER_CEILING,
    make: () => new FlakeId({ id: 1, epoch: Number(TWITTER_EPOCH_MS) }),
    one: (g) => () => g.next(),
    user: (g) => () => {
      for (;;) {
        try {
          return g.next()
        } catch (e) {
          // "Sequence exceeded its maximum value": the millisecond is used up; try again
        }
      }
    },
    toBig: (b) => b.readBigUInt64BE(0), ts: twitterMs,
    note: 'returns a Buffer; throws when a millisecond\'s sequence is used up',
  }))
  tryPeer('simple-flakeid', ({ SnowflakeIdv1 }) => ({
    key: 'simple-flakeid', name: 'simple-flakeid', library: 'simple-flakeid',
    config: 'new SnowflakeIdv1({ workerId: 1, workerIdBitLength: 10, seqBitLength: 12, maxSeqNumber: 4095 }).NextId()',
    layout: 'time (since 2020-01-01) | worker 10 | sequence 12, 1 ms', ceiling: 4091000,
    make: () => new SnowflakeIdv1({ workerId: 1, workerIdBitLength: 10, seqBitLength: 12, maxSeqNumber: 4095 }),
    one: (g) => () => g.NextId(), toBig: (x) => BigInt(x), ts: (id) => Number((id >> 22n) + 1577836800000n),
    note: 'sequence numbers 0-4 are reserved (4,091 a millisecond); when they run out it drifts ahead of the clock',
  }))
  tryPeer('uuid', (uuid) => ({
    key: 'uuid-v7', name: 'uuid v7()', library: 'uuid', config: 'uuid.v7() (a string)',
    layout: 'UUIDv7, 128 bits: ms timestamp 48 | counter and random', ceiling: null,
    make: () => null, one: () => uuid.v7, toBig: uuidToBig, ts: uuidMs,
    note: '128-bit IDs as 36-character strings',
  }))
  out.push({
    key: 'crypto-randomUUID', name: 'crypto.randomUUID()', library: 'node', version: process.versions.node, flakery: false,
    config: 'crypto.randomUUID()', layout: 'UUIDv4, 128 bits: random 122', ceiling: null,
    make: () => null, one: () => crypto.randomUUID, toBig: uuidToBig, ts: null,
    note: 'random, not time-ordered; 36-character strings',
  })
  for (const p of out) {
    p.burst = p.burst || 1000
    p.user = p.user || p.one
    p.batchApi = p.batchApi || 'a loop into an Array'
  }
  return out
}

// Peak RSS of this process's memory: VmHWM where Linux has it. Not maxRSS first: Linux carries
// ru_maxrss across execve from the process that forked, so a fresh child would start with its
// parent's peak.
function maxRssBytes() {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(require('node:fs').readFileSync('/proc/self/status', 'utf8'))
    if (m) return Number(m[1]) * 1024
  } catch (e) {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024
}

const nowMs = () => Date.now()
function waitForMs() {
  const m = Date.now()
  while (Date.now() === m);
}
const loadAverage = () => (process.platform === 'win32' ? null : os.loadavg())
const median = (v) => {
  const s = [...v].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function perCall(p, f, rounds) {
  const burst = p.burst
  let sink
  for (let r = 0; r < 20; r++) {
    waitForMs()
    for (let i = 0; i < burst; i++) sink = f()
  }
  const ns = []
  for (let r = 0; r < rounds; r++) {
    waitForMs()
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < burst; i++) sink = f()
    ns.push(Number(process.hrtime.bigint() - t0) / burst)
  }
  globalThis.__sink = sink
  return {
    ns: median(ns),
    ns_min: Math.min(...ns),
    ns_mean: ns.reduce((a, b) => a + b, 0) / ns.length,
    calls: rounds * burst,
    burst,
    tick_ms: 1,
    method: `${rounds} bursts of ${burst} calls, each started right after a 1 ms boundary; median of the bursts' ns per call`,
  }
}

function sustained(p, f, seconds) {
  let sink
  const t0 = process.hrtime.bigint()
  const end = t0 + BigInt(Math.round(seconds * 1e9))
  let ids = 0
  for (;;) {
    for (let i = 0; i < 1024; i++) sink = f()
    ids += 1024
    if (process.hrtime.bigint() >= end) break
  }
  const dt = Number(process.hrtime.bigint() - t0) / 1e9
  const last = f()
  globalThis.__sink = sink
  const rate = ids / dt
  return {
    seconds: dt, ids, ids_per_s: rate, ceiling_per_s: p.ceiling,
    ceiling_ratio: p.ceiling ? rate / p.ceiling : null, not_increasing: null,
    ahead_ms: p.ts ? p.ts(p.toBig(last)) - nowMs() : null,
    method: 'a plain loop of f() in runs of 1,024, the clock read between runs',
  }
}

function checks(p, bigs, clockAfter) {
  let notIncreasing = 0
  let newest = null
  for (let i = 0; i < bigs.length; i++) {
    if (i > 0 && bigs[i] <= bigs[i - 1]) notIncreasing++
  }
  if (p.ts) for (const b of bigs) { const t = p.ts(b); if (newest === null || t > newest) newest = t }
  return {
    duplicates: bigs.length - new Set(bigs).size,
    not_increasing: notIncreasing,
    ahead_ms: newest === null ? null : newest - clockAfter,
  }
}

function childBatch(key, n, repeat) {
  const p = peers([]).find((x) => x.key === key)
  const g = p.make()
  const f = p.user(g)
  const make = p.batch
    ? () => p.batch(g, n)
    : () => {
        const a = new Array(n)
        for (let i = 0; i < n; i++) a[i] = f()
        return a
      }
  for (let i = 0; i < 10; i++) f()
  if (global.gc) global.gc()
  // The first batch gives the memory figure (one batch alive); the others only time.
  const rssBefore = maxRssBytes()
  let t0 = process.hrtime.bigint()
  let batch = make()
  let best = Number(process.hrtime.bigint() - t0) / 1e6
  const clockAfter = nowMs()
  const growth = Math.max(0, maxRssBytes() - rssBefore)
  const first = batch
  for (let r = 1; r < repeat; r++) {
    batch = null
    t0 = process.hrtime.bigint()
    batch = make()
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6)
  }
  batch = first
  if (batch.length !== n) throw new Error('a short batch')
  const bigs = Array.from(batch, p.toBig)
  return {
    n, api: p.batchApi, repeat, ms: best, ns_per_id: (best * 1e6) / n,
    rss_growth_bytes: growth, bytes_per_id: growth / n,
    rss_note: "growth of a fresh process's peak RSS over its first batch (the checks run on that batch)",
    ...checks(p, bigs, clockAfter),
  }
}

function batchInChild(key, n, repeat) {
  const r = spawnSync(process.execPath, ['--expose-gc', __filename, '--child', key, '--n', String(n), '--repeat', String(repeat)], {
    encoding: 'utf8', maxBuffer: 1 << 20,
  })
  if (r.status !== 0) return { error: (r.stderr || String(r.error)).trim().slice(-2000) }
  return JSON.parse(r.stdout)
}

function arg(name) {
  const i = process.argv.indexOf(name)
  return i < 0 ? undefined : process.argv[i + 1]
}

function main() {
  const child = arg('--child')
  if (child) {
    process.stdout.write(JSON.stringify(childBatch(child, Number(arg('--n')), Number(arg('--repeat')))) + '\n')
    return
  }
  const smoke = process.argv.includes('--smoke')
  const rounds = smoke ? 5 : 400
  const seconds = smoke ? 0.03 : 1
  const n = smoke ? 10000 : 1000000
  const repeat = smoke ? 1 : 3
  const started = Date.now()
  const skipped = []
  const result = {
    language: 'node', mode: smoke ? 'smoke' : 'full', node: process.version,
    load_before: loadAverage(), generators: [], skipped,
  }
  for (const p of peers(skipped)) {
    console.error(`--- ${p.name}`)
    const g = p.make()
    result.generators.push({
      key: p.key, name: p.name, library: p.library, version: p.version, flakery: p.flakery,
      config: p.config, layout: p.layout, ceiling_per_s: p.ceiling, note: p.note,
      per_call: perCall(p, p.one(g), rounds),
      sustained: sustained(p, p.user(p.make()), seconds),
      batch: batchInChild(p.key, n, repeat),
      threads: null,
    })
  }
  result.load_after = loadAverage()
  result.seconds = (Date.now() - started) / 1e3
  const text = JSON.stringify(result, null, 2) + '\n'
  const out = arg('--out')
  if (out) require('node:fs').writeFileSync(out, text)
  else process.stdout.write(text)
}

main()
