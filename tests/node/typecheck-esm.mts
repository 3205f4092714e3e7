// The same package seen from an ES module (checked, never run).
import flakery, { Generator, decode, nextId } from 'flakery'

const id: bigint = nextId()
const viaDefault: bigint = flakery.nextId()
const generator = new Generator({ workerId: 1 })
const workerId: number = decode(generator.nextId()).workerId
console.log(id, viaDefault, workerId)
