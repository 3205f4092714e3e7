// index.d.ts declares by hand what napi-rs cannot see (bindings-node/types.d.ts: the hot calls,
// registered as plain Node-API callbacks). This checks those declarations against the module
// as it loads: every declared function exists, every export is declared, and the generating
// calls return what the declarations say.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

import * as esm from 'flakery'

const require = createRequire(import.meta.url)
const flakery = require('flakery')
const dts = readFileSync(require.resolve('flakery/package.json').replace(/package\.json$/, 'index.d.ts'), 'utf8')

const declared = (pattern) => [...dts.matchAll(pattern)].map((m) => m[1]).sort()
// The body of the declarations named `name` (`interface Generator {...}`, `class Generator {...}`).
const members = (kind, name) => {
  const start = dts.indexOf(`${kind} ${name} {`)
  assert.ok(start >= 0, `index.d.ts has no ${kind} ${name}`)
  const body = dts.slice(start, dts.indexOf('\n}', start))
  return [...body.matchAll(/^  (?:get )?([A-Za-z]\w*)\(/gm)].map((m) => m[1])
}

test('every export is declared in index.d.ts, and every declared value is exported', () => {
  // napi-rs's loader declares its own `__napiBindingTarget` marker; the rest is flakery's.
  const values = declared(/^export declare (?:function|class|const) (\w+)/gm).filter((k) => !k.startsWith('__napi'))
  const exported = Object.keys(flakery).filter((k) => !k.startsWith('__napi')).sort()
  assert.deepEqual(exported, values)
  // The ES module entry exports the same names (plus its default).
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), values)
})

test('the hand-declared calls are functions that return the declared types', () => {
  for (const name of ['nextId', 'nextIdString', 'nextIds']) {
    assert.match(dts, new RegExp(`^export declare function ${name}\\(`, 'm'), name)
    assert.equal(typeof flakery[name], 'function', name)
  }
  assert.match(dts, /^export declare function nextId\(\): bigint$/m)
  assert.equal(typeof flakery.nextId(), 'bigint')
  assert.match(dts, /^export declare function nextIdString\(options\?: IdStringOptions\): string$/m)
  assert.equal(typeof flakery.nextIdString(), 'string')
  assert.match(dts, /^export declare function nextIds\(n: number\): BigInt64Array$/m)
  assert.ok(flakery.nextIds(2) instanceof BigInt64Array)
})

test("a Generator's members are the declared ones, its own calls included", () => {
  const g = new flakery.Generator({ workerId: 1 })
  const own = Object.getOwnPropertyNames(g).sort()
  assert.deepEqual(own, members('interface', 'Generator').sort())
  const proto = Object.getOwnPropertyNames(flakery.Generator.prototype).filter((k) => k !== 'constructor')
  assert.deepEqual(proto.sort(), members('class', 'Generator').filter((k) => k !== 'constructor').sort())
  assert.match(dts, /^  nextId\(\): bigint$/m)
  assert.equal(typeof g.nextId(), 'bigint')
  assert.match(dts, /^  nextIdString\(options\?: IdStringOptions\): string$/m)
  assert.equal(typeof g.nextIdString(), 'string')
  assert.match(dts, /^  nextIds\(n: number\): BigInt64Array$/m)
  assert.ok(g.nextIds(2) instanceof BigInt64Array)
})
