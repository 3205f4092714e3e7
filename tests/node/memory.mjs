// The leak check of the Node package (tests/node/leaks.test.mjs, and the Client's in
// tests/client/client.test.mjs): a call made CALLS times, the process's resident memory read
// after a full collection before and after. Native memory a call never frees (a CString, a
// Box, an error not released: 30 bytes or more a call, 3 MB or more over 100,000 calls) is
// seen only there: JavaScript's own heap is collected first.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import v8 from 'node:v8'
import vm from 'node:vm'

export const CALLS = 100_000

// The calls are measured in rounds of ROUND: a leak grows every round by the same amount (30
// bytes a call: 1.5 MB a round), while the allocator's arenas and their fragmentation grow by
// steps of a few megabytes now and then and settle. So the least growth of ROUNDS rounds is
// what is bounded. Measured with no leak: 0 to 0.3 MB (tests/node, a loaded 2-core machine).
export const ROUND = CALLS / 2
export const ROUNDS = 3
export const BOUND_BYTES = 0.75 * 1024 * 1024

// `global.gc` without --expose-gc on the command line (node --test starts each file itself).
v8.setFlagsFromString('--expose-gc')
const gc = globalThis.gc ?? vm.runInNewContext('gc')

const turn = () => new Promise(setImmediate)

async function settle() {
  // Node-API finalizers (a Generator's, a Client's, their bound functions') run after the
  // collection that found their objects, on a later turn of the loop: collect, let them run,
  // collect what they let go.
  for (let i = 0; i < 3; i++) {
    gc()
    await turn()
  }
  // V8's own heap grows to its working size by steps of megabytes, in pages that count in
  // the resident set: what is left is native memory (the addon's, the allocator's).
  const { rss, heapTotal } = process.memoryUsage()
  return rss - heapTotal
}

// Threads of this process now.
export const threads = () => readdirSync('/proc/self/task').length

// Marks a call that makes an object and closes it (`new Client(...).close()`): its loop is
// collected every 1,000 calls and its threads are counted (`growth`). Such an object keeps
// its native memory until V8 collects it (3.9 KB a closed Client, 1.7 KB a Generator, for
// the Node-API references of its bound calls and the Rust object behind them), and V8
// collects when its own heap asks, not when native memory does: 7,000 to 16,000 of them
// awaited collection at once here, more when the machine is loaded (V8's marking runs on
// threads that then get less CPU). The allocator keeps the highest of those peaks resident,
// so a round that reached a new peak grew by megabytes with nothing leaked (944 KiB at load
// 19; 15 MB in one round beside two busy loops), and 600,000 clients in a row levelled off.
// Collecting on a fixed schedule bounds the peak by the loop, not by the load.
export function madeAndClosed(call) {
  call.madeAndClosed = true
  return call
}

// Runs `call(i)` ROUND times to warm up (the JIT, the allocator's arenas, V8's heap at its
// working size), then ROUNDS rounds of ROUND calls (at least CALLS in all), and returns the
// least growth of native memory of a round. The loop yields to the event loop every 1,000
// calls, so that finalizers run as they would in a program. `call` may return a Promise: then
// each call is awaited in turn. A call marked `madeAndClosed` is collected at each yield, and
// the threads alive after its calls returned never exceed those before the loop: a `close()`
// that leaves a thread behind makes them pile up whenever threads end late (a loaded machine).
export async function growth(call) {
  const baseline = threads()
  let most = baseline
  const run = async () => {
    for (let i = 0; i < ROUND; i++) {
      const result = call(i)
      if (result instanceof Promise) await result
      if (i % 1000 === 999) {
        if (call.madeAndClosed) {
          most = Math.max(most, threads())
          gc()
        }
        await turn()
      }
    }
  }
  await run()
  let least = Infinity
  let before = await settle()
  for (let round = 0; round < ROUNDS; round++) {
    await run()
    const after = await settle()
    least = Math.min(least, after - before)
    before = after
  }
  assert.ok(most <= baseline, `${most} threads after a call returned, ${baseline} before the loop: a thread outlived close()`)
  return least
}

// The source of every call assertNoLeak has looped in this process, for the check that each
// export of the package has a loop (tests/node/leaks.test.mjs).
export const loopsRun = []

// Asserts that each entry of `calls` ({name: call}) leaves less than BOUND_BYTES of native
// growth in at least one of its rounds; reports each growth in the message.
export async function assertNoLeak(calls) {
  loopsRun.push(...Object.values(calls).map(String))
  const grown = {}
  for (const [name, call] of Object.entries(calls)) grown[name] = await growth(call)
  const report = Object.entries(grown)
    .map(([name, bytes]) => `${name}: ${(bytes / 1024).toFixed(0)} KiB`)
    .join(', ')
  for (const [name, bytes] of Object.entries(grown)) {
    assert.ok(bytes < BOUND_BYTES, `${name} grew the process by ${bytes} bytes or more in each round of ${ROUND} calls (${report})`)
  }
  return report
}

// Calls `fn` and returns what it threw (for the error paths of a leak check).
export function caught(fn) {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}
