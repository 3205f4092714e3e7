#!/usr/bin/env node
// A quick measure of the Node binding's calls: node bindings-node/bench.js
//
// Twitter's layout allows 4096 IDs per millisecond per node, so a loop that asks for more
// waits for the next millisecond (about 244 ns per ID on average). The per-call cost is
// measured on a layout with a 21-bit sequence, where the layout is never the limit; set
// FLAKERY_LAYOUT to measure the module-level calls on another one.
'use strict'

const WIDE = 'time:41,worker:1,sequence:21;epoch=1288834974657'
if (!process.env.FLAKERY_LAYOUT) process.env.FLAKERY_LAYOUT = WIDE
const flakery = require('..')

function measure(cases, { calls = 2_000_000, rounds = 7 } = {}) {
  // Interleaved rounds, best of each: on a shared machine the minimum is the signal.
  const best = new Map(cases.map(([name]) => [name, Infinity]))
  for (const [, fn, per = 1] of cases) for (let i = 0; i < 100_000 / per; i++) fn()
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn, per = 1] of cases) {
      const n = Math.ceil(calls / per)
      const start = process.hrtime.bigint()
      for (let i = 0; i < n; i++) fn()
      const ns = Number(process.hrtime.bigint() - start) / (n * per)
      best.set(name, Math.min(best.get(name), ns))
    }
  }
  for (const [name, ns] of best) console.log(`${name.padEnd(48)} ${ns.toFixed(1).padStart(7)} ns/ID`)
}

const generator = new flakery.Generator({ layout: WIDE, workerId: 1 })
const twitter = new flakery.Generator({ layout: 'twitter', workerId: 1 })
console.log(`node ${process.version}, FLAKERY_LAYOUT=${process.env.FLAKERY_LAYOUT}`)
measure([
  ['nextId()', flakery.nextId],
  ['nextIdString()', flakery.nextIdString],
  ['nextIds(1000)', () => flakery.nextIds(1000), 1000],
  ['generator.nextId()', () => generator.nextId()],
  ['generator.nextIdString()', () => generator.nextIdString()],
  ['generator.nextIds(1000)', () => generator.nextIds(1000), 1000],
  ['twitter generator.nextId() (4096 IDs/ms cap)', () => twitter.nextId()],
])
