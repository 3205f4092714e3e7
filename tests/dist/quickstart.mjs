// The Node quick start, run against the installed npm tarballs (tests/dist/run.sh).
import { createRequire } from 'node:module'
import { nextId, nextIds, decode, Generator } from 'flakery'

const a = nextId()
const b = nextId()
if (typeof a !== 'bigint' || !(b > a)) throw new Error(`ids ${a}, ${b}`)
const generator = new Generator({ workerId: 7 })
const ids = generator.nextIds(100)
if (decode(ids[99]).workerId !== 7 || !(ids[99] > ids[0])) throw new Error('bad IDs')
if (nextIds(3).length !== 3) throw new Error('nextIds')
let code = null
try {
  decode(-1n)
} catch (error) {
  code = error.code
}
if (code !== 'invalid_argument') throw new Error(`decode(-1n) gave ${code}`)
const require = createRequire(import.meta.url)
const addon = require.resolve('flakery-linux-x64-gnu')
console.log(`node quickstart: ${b} with ${addon}`)
