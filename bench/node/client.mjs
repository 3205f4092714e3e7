// A Node Client's steady-state calls beside a Generator's, against a running `flakery serve`:
//
//   node bench/node/client.mjs http://127.0.0.1:8080
//
// The figures of docs/client.md#node-quick-start: the process's CPU time per call (best of 15
// rounds of 99,999 calls each, the calls alternating round by round in one process), served
// from blocks of 100,000 (a round may outrun the refill and wait for its block, as it must).
import { Client, Generator } from '../../index.mjs'

const url = process.argv[2]
if (!url) throw new Error('usage: node bench/node/client.mjs SERVER_URL')
const ROUNDS = 15
const CALLS = 99_999

const client = new Client({ servers: [url], minBlock: 100_000, maxBlock: 100_000 })
const generator = new Generator({ workerId: 1, sequencePolicy: 'borrow' })
await client.nextIds(100_000) // the first block, and the client's thread running

const cpuNs = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) * 1000
}

const calls = {
  'await client.nextId()': async () => {
    for (let i = 0; i < CALLS; i++) await client.nextId()
  },
  'client.tryNextId() ?? await client.nextId()': async () => {
    for (let i = 0; i < CALLS; i++) client.tryNextId() ?? (await client.nextId())
  },
  'await generator.nextId()': async () => {
    for (let i = 0; i < CALLS; i++) await generator.nextId()
  },
  'generator.nextId()': async () => {
    for (let i = 0; i < CALLS; i++) generator.nextId()
  },
  'await client.nextIds(1000), per ID': async () => {
    for (let i = 0; i < CALLS / 1000; i++) await client.nextIds(1000)
  },
}

const best = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(calls)) {
    const start = cpuNs()
    await run()
    const ns = (cpuNs() - start) / CALLS
    best[name] = Math.min(best[name] ?? Infinity, ns)
  }
}
for (const [name, ns] of Object.entries(best)) console.log(`${name}: ${ns.toFixed(1)} ns`)
client.close()
