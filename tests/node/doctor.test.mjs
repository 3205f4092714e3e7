// doctor(): the core's budgets report (docs/doctor.md) as a plain object, its options read as
// a Generator's are.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import net from 'node:net'
import { fileURLToPath } from 'node:url'

import { Generator, doctor, layoutInfoOf } from 'flakery'

import { CODES } from './helpers.mjs'

const caught = (fn) => {
  try {
    fn()
  } catch (error) {
    return error
  }
  assert.fail('did not throw')
}

// JSON with bigints as text: what an application would log.
const logged = (report) => JSON.stringify(report, (_, v) => (typeof v === 'bigint' ? `${v}` : v))

test("doctor() gives the report's sections as plain data", () => {
  const report = doctor({ workerId: 3, datacenterId: 1 })
  assert.deepEqual(Object.keys(report), ['status', 'exit_code', 'layout', 'clock', 'node', 'findings'])
  assert.equal(Object.getPrototypeOf(report), Object.prototype)
  assert.ok(['ok', 'warnings'].includes(report.status), logged(report))
  assert.equal(report.exit_code, report.status === 'ok' ? 0 : 1)
  // The layout's budget for the layout given (here the default), as layoutInfoOf says.
  const twitter = layoutInfoOf('twitter')
  assert.equal(report.layout.layout, 'twitter')
  assert.equal(report.layout.ids_per_tick, twitter.idsPerTick)
  assert.equal(report.layout.ids_per_second_per_node, twitter.idsPerSecond)
  assert.equal(report.layout.node_ids, twitter.nodeIds)
  assert.equal(report.layout.time_runs_out, new Date(twitter.exhaustedAtMs).toISOString())
  assert.ok(report.layout.days_left > 365 * 50, logged(report.layout))
  // Whether the kernel thinks the clock synchronised (null where adjtimex cannot be read).
  assert.ok('synchronised' in report.clock, logged(report.clock))
  assert.ok(Array.isArray(report.clock.daemons), logged(report.clock))
  // The node ID the options fix, and why.
  assert.match(logged(report.node), /explicit/)
  for (const finding of report.findings) {
    assert.deepEqual(Object.keys(finding), ['level', 'topic', 'text', 'fix'])
    assert.ok(['note', 'warning'].includes(finding.level), logged(finding))
  }
  // A layout given as an entry of layouts(), as a Generator takes it.
  assert.equal(doctor({ layout: layoutInfoOf('discord'), workerId: 1 }).layout.layout, 'discord')
})

test('a configuration a Generator refuses is reported at the exit-status-2 level', () => {
  const options = { workerId: 40 } // twitter's worker field holds 0..31
  const refusal = caught(() => new Generator(options))
  assert.equal(refusal.code, 'invalid_argument')
  const report = doctor(options)
  assert.equal(report.status, 'refused', logged(report))
  assert.equal(report.exit_code, 2)
  const refused = report.findings.filter((f) => f.level === 'refused')
  assert.equal(refused.length, 1, logged(report.findings))
  assert.equal(refused[0].topic, 'node')
  assert.match(refused[0].text, /40/)
})

test('an integer past 2^53 is a bigint, exact; every other one a number', () => {
  // 53 sequence bits: 2^53 IDs a millisecond, 2^53 * 1000 a second.
  const report = doctor({ layout: 'time:10,sequence:53;epoch=2024-01-01T00:00:00Z' })
  assert.equal(report.layout.ids_per_tick, 2n ** 53n)
  assert.equal(report.layout.ids_per_second_per_node, 2n ** 53n * 1000n)
  assert.equal(report.layout.node_ids, 1)
})

test('bad options throw what the Generator throws: the same class, code and message', () => {
  const bad = [
    'twitter',
    { wrokerId: 1 },
    { workerId: -1 },
    { workerId: 1.5 },
    { workerId: '1' },
    { layout: 'time:41,nope:3' },
    { layout: 42 },
    { sequencePolicy: 'later' },
    { randomSequenceStart: 1 },
    { backwardsToleranceMs: -5 },
    { fields: { version: -1 } },
    { databaseUrl: 'http://127.0.0.1/db' },
    { databaseUrl: '' },
    { databaseMode: 'nope' },
  ]
  for (const options of bad) {
    const fromGenerator = caught(() => new Generator(options))
    const fromDoctor = caught(() => doctor(options))
    const what = `${JSON.stringify(options)}: ${fromGenerator.message}`
    assert.ok(CODES.includes(fromDoctor.code), what)
    assert.equal(fromDoctor.constructor, fromGenerator.constructor, what)
    assert.equal(fromDoctor.code, fromGenerator.code, what)
    assert.equal(fromDoctor.message, fromGenerator.message, what)
  }
})

test('a bad FLAKERY_* variable throws what the Generator throws', () => {
  const saved = process.env.FLAKERY_LAYOUT
  process.env.FLAKERY_LAYOUT = 'time:41,nope:3'
  try {
    const fromGenerator = caught(() => new Generator({ workerId: 1 }))
    const fromDoctor = caught(() => doctor({ workerId: 1 }))
    assert.equal(fromDoctor.constructor, RangeError)
    assert.equal(fromDoctor.code, 'invalid_layout')
    assert.equal(fromDoctor.message, fromGenerator.message)
  } finally {
    if (saved === undefined) delete process.env.FLAKERY_LAYOUT
    else process.env.FLAKERY_LAYOUT = saved
  }
})

test("a database URL's password is in neither the report nor its errors", async () => {
  const secret = 's3cr3t-Pw-22917'
  // Nothing listens on 127.0.0.1:22917 (this area's port range): the probe fails at once and
  // the report names the database, never the password.
  const report = doctor({ databaseUrl: `postgres://flakery:${secret}@127.0.0.1:22917/ids` })
  const text = logged(report)
  assert.equal(report.status, 'refused', text)
  assert.match(text, /flakery:\*\*\*@127\.0\.0\.1:22917/, 'the report names the database')
  assert.ok(!text.includes('s3cr3t'), text)
  // A listener that accepts and never answers: the probe passes, so the census reads the URL
  // and refuses its unknown sslmode before connecting, as a Generator does. Its message is in
  // the report; the password is not. (On a closed port the census never ran.)
  const listener = net.createServer(() => {})
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = listener.address()
    const bogus = doctor({ databaseUrl: `postgres://flakery:${secret}@127.0.0.1:${port}/ids?sslmode=bogus` })
    const text = logged(bogus)
    assert.equal(bogus.status, 'refused', text)
    assert.match(bogus.node.coordinator.node_ids, /^not counted: invalid_argument: .*sslmode 'bogus'/, text)
    assert.ok(!text.includes('s3cr3t'), text)
  } finally {
    listener.close()
  }
  const error = caught(() => doctor({ databaseUrl: `mysqlx://flakery:${secret}@127.0.0.1:22917/ids` }))
  assert.equal(error.code, 'invalid_argument')
  assert.ok(!`${error.message} ${error.stack}`.includes('s3cr3t'), error.message)
})

// tests/node/memory.mjs's loops (100,000 calls and more), in a PID namespace of its own
// (tests/node/doctor-leaks.mjs says why); the namespace needs root, or a user namespace.
test('doctor() leaks nothing, its errors included', (t) => {
  const root = process.getuid() === 0
  const unshare = ['--pid', '--fork', '--mount-proc', ...(root ? [] : ['--map-root-user'])]
  if (spawnSync('unshare', [...unshare, 'true']).status !== 0) {
    assert.ok(process.env.CI !== 'true', 'unshare (a PID namespace) is not permitted here')
    t.skip('unshare (a PID namespace) is not permitted here')
    return
  }
  const script = fileURLToPath(new URL('doctor-leaks.mjs', import.meta.url))
  const child = spawnSync('unshare', [...unshare, process.execPath, script], { encoding: 'utf8' })
  assert.equal(child.status, 0, `${child.stdout}${child.stderr}`)
  t.diagnostic(child.stdout.trim())
})
