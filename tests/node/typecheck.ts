// A usage example checked by `tsc --noEmit -p tests/node` against index.d.ts (never run).
import {
  Client,
  Generator,
  compose,
  decode,
  doctor,
  layoutInfoOf,
  layouts,
  nextId,
  nextIdString,
  nextIds,
  fromBase32,
  fromBase62,
  toBase32,
  toBase62,
  type ClientOptions,
  type DecodedId,
  type DoctorFinding,
  type DoctorReport,
  type IdStringOptions,
  type GeneratorOptions,
  type LayoutInfo,
} from 'flakery'

// The process-wide generator.
const id: bigint = nextId()
const text: string = nextIdString()
const batch: BigInt64Array = nextIds(100)

// A generator of one's own.
const options: GeneratorOptions = {
  layout: 'discord',
  datacenterId: 1,
  workerId: 2n,
  sequencePolicy: 'borrow',
  maxBorrowMs: 1000,
  backwardsToleranceMs: 1000,
  randomSequenceStart: false,
}
const generator = new Generator(options)
const made: Promise<Generator> = Generator.create(options)
const own: bigint = generator.nextId()
const ownText: string = generator.nextIdString()
const ownBatch: BigInt64Array = generator.nextIds(10)
const spec: string = generator.layout
const node: number = generator.datacenterId + generator.workerId
const source: 'explicit' | 'environment' | 'hostname' | 'zookeeper' | 'database' | 'host_lease' =
  generator.source
generator.close()
const closed: boolean = generator.closed

// Taking IDs apart and putting them together.
const parts: DecodedId = decode(own, { layout: 'discord' })
const when: Date = parts.date
const ms: number = parts.timestampMs + parts.sequence + parts.workerId + parts.datacenterId
const field: number | bigint | undefined = parts.fields['time']
decode('175928847299117063', 'discord')
decode(12345)
const again: bigint = compose({
  layout: 'discord',
  timestampMs: parts.timestampMs,
  datacenterId: parts.datacenterId,
  workerId: parts.workerId,
  sequence: parts.sequence,
})

// Layouts.
const presets: LayoutInfo[] = layouts()
const twitter = presets[0]!
const perSecond: number = twitter.idsPerSecond
const runsOut: Date | null = twitter.exhaustedAt
const fromInfo = new Generator({ layout: twitter, workerId: 1 })
const fromDatabase: GeneratorOptions = {
  databaseUrl: 'postgres://app@127.0.0.1:5432/app',
  databaseMode: 'baidu',
}
const custom: LayoutInfo = layoutInfoOf('time:41,worker:10,sequence:12;epoch=1288834974657')
const name: string | null = custom.name

// The budgets report, as data.
const report: DoctorReport = doctor({ workerId: 1 })
const refused: boolean = report.exit_code === 2 || report.status === 'refused'
const firstFinding: DoctorFinding | undefined = report.findings[0]
const fix: string | undefined = firstFinding?.fix
const perNode = report.layout['ids_per_second_per_node'] // number, or bigint past 2^53
doctor()

// Errors carry their code (docs/spec.md#errors).
try {
  decode(2 ** 60)
} catch (error) {
  if (error instanceof RangeError && (error as Error & { code?: string }).code === 'invalid_argument') {
    console.log(error.message)
  }
}

// What the types refuse.
// @ts-expect-error: nextIds takes a number
nextIds('3')
// @ts-expect-error: an ID is a bigint, a string or a number
decode(true)
// @ts-expect-error: unknown sequence policy
new Generator({ sequencePolicy: 'sometimes' })
// @ts-expect-error: unknown database mode
new Generator({ databaseUrl: 'postgres://app@127.0.0.1/app', databaseMode: 'leaf' })
// @ts-expect-error: compose needs timestampMs
compose({ workerId: 1 })
// @ts-expect-error: an ID is a bigint, not a number
const wrong: number = nextId()

console.log(id, text, batch, own, ownText, ownBatch, spec, node, source, closed, when, ms, field)
console.log(again, perSecond, runsOut, fromInfo, fromDatabase, name, wrong)

// Text forms.
const b32: string = toBase32(id)
const b62: string = toBase62('175928847299117063')
const back: bigint = fromBase32(b32) + fromBase62(b62)
const formatted: string = nextIdString({ format: 'base32' }) + generator.nextIdString({ format: 'base62' })
const idStringOptions: IdStringOptions = { format: 'decimal' }
// @ts-expect-error: not one of the formats
nextIdString({ format: 'hex' })
console.log(b32, b62, back, formatted, idStringOptions)

// A client of `flakery serve`: the calls that may wait are Promises, the tries never wait.
async function fromServers(): Promise<void> {
  const clientOptions: ClientOptions = { servers: ['http://127.0.0.1:8080'], timeoutMs: 5000 }
  const client = new Client(clientOptions)
  const served: bigint = await client.nextId()
  const servedText: string = await client.nextIdString({ format: 'base62' })
  const servedBatch: BigInt64Array = await client.nextIds(10)
  const held: bigint | null = client.tryNextId()
  const heldText: string | null = client.tryNextIdString({ format: 'base32' })
  // The same line takes an ID from a Generator or a Client.
  for (const source of [generator, client]) {
    const either: bigint = await source.nextId()
    console.log(either)
  }
  // @ts-expect-error: a Client's nextId is a Promise, not a bigint
  const notYet: bigint = client.nextId()
  // @ts-expect-error: a try may find no ID
  const maybe: bigint = client.tryNextId()
  console.log(served, servedText, servedBatch, held, heldText, client.decode(served).workerId, notYet, maybe)
  client.close()
}
void fromServers()
