// The same package seen from an ES module (checked, never run).
import flakery, { Client, Generator, decode, nextId } from 'flakery'

const id: bigint = nextId()
const viaDefault: bigint = flakery.nextId()
const generator = new Generator({ workerId: 1 })
const workerId: number = decode(generator.nextId()).workerId
const client = new Client({ servers: 'http://127.0.0.1:8080' })
const served: bigint = await client.nextId()
const held: bigint | null = client.tryNextId()
console.log(id, viaDefault, workerId, served, held)
