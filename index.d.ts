/* eslint-disable */
// The head of index.d.ts, written by hand in bindings-node/types.d.ts (napi build generates
// the rest from the functions themselves and from the `#[napi(object)]` result types:
// `DecodedId`, `LayoutInfo`, `LayoutField`). It declares what napi-rs cannot see: the hot
// calls, which are registered by hand (bindings-node/src/fast.rs), and the shapes of the
// option objects that the functions read by hand. tests/node/types.test.mjs checks these
// declarations against the module as it loads.
//
// Errors, from every function: a `TypeError` when a value has the wrong type (code
// `invalid_argument`); a `RangeError` for any other `invalid_argument` or `invalid_layout`,
// from an argument or from a `FLAKERY_*` variable; a plain `Error` for every other code
// (`time_exhausted`, `clock_moved_backwards`, `lease_lost`, `coordinator_unavailable`,
// `worker_ids_exhausted`, `forked`, and a `Client`'s `servers_unavailable`, `unauthorized`,
// `bad_answer`, `tls_failed`). Each has the code as `.code`.

/** The stable code of every error flakery throws (its `.code`). */
export type ErrorCode =
  | 'invalid_layout'
  | 'invalid_argument'
  | 'time_exhausted'
  | 'clock_moved_backwards'
  | 'lease_lost'
  | 'coordinator_unavailable'
  | 'worker_ids_exhausted'
  | 'forked'
  | 'servers_unavailable'
  | 'unauthorized'
  | 'bad_answer'
  | 'tls_failed'

/**
 * A new ID from the process-wide generator, which is made on first use from the `FLAKERY_*`
 * environment and shared by every worker thread of the process.
 */
export declare function nextId(): bigint

/**
 * A new ID from the process-wide generator as a string: decimal unless `options.format` says
 * `'base32'` or `'base62'` (the forms of `toBase32` and `toBase62`).
 */
export declare function nextIdString(options?: IdStringOptions): string

/** Options of `nextIdString()`. */
export interface IdStringOptions {
  /** Default `'decimal'`. */
  format?: 'decimal' | 'base32' | 'base62'
}

/** `n` new IDs from the process-wide generator, in increasing order (`n` up to 2^24). */
export declare function nextIds(n: number): BigInt64Array

/**
 * The generating calls of a `Generator`. They are own properties of each generator, bound to
 * it: `const next = g.nextId; next()` works (they are not on `Generator.prototype`).
 */
export interface Generator {
  /** A new ID. */
  nextId(): bigint
  /** A new ID as a string: decimal unless `options.format` says `'base32'` or `'base62'`. */
  nextIdString(options?: IdStringOptions): string
  /** `n` new IDs in increasing order (`n` up to 2^24). */
  nextIds(n: number): BigInt64Array
}

/**
 * Options of `new Generator()`. Every key is optional; one not given comes from the
 * `FLAKERY_*` environment, then the default.
 */
export interface GeneratorOptions {
  /**
   * A spec string (`'twitter'`, `'discord;epoch=...'`, `'time:41,...;epoch=...'`) or an entry
   * of `layouts()`. Default: `FLAKERY_LAYOUT`, else `'twitter'`.
   */
  layout?: string | LayoutInfo
  datacenterId?: number | bigint
  workerId?: number | bigint
  /**
   * When a tick's sequence is used up: wait for the next tick (default) or borrow ticks
   * from the future, at most `maxBorrowMs` ahead.
   */
  sequencePolicy?: 'wait' | 'borrow'
  /** Default 1000. */
  maxBorrowMs?: number
  /**
   * A clock step backwards up to this is waited out; a larger one fails with
   * `clock_moved_backwards`. Default 1000.
   */
  backwardsToleranceMs?: number
  /** Start each tick's sequence at a random number. Default false. */
  randomSequenceStart?: boolean
  /** Values of the layout's constant fields, e.g. `{version: 1}`. */
  fields?: Record<string, number | bigint>
  /** ZooKeeper connect string for leased node IDs (`127.0.0.1:2181/flakery`). */
  zookeeper?: string
  /** ZooKeeper namespace; default `'default'`. */
  namespace?: string
  /** ZooKeeper session timeout; default 10000. */
  sessionTimeoutMs?: number
  /**
   * Directory of the host-local lease files (`flakery.<namespace>.node-<index>`, directly in
   * it); default `FLAKERY_LEASE_DIR`, else `/run/lock` (outside containers only).
   */
  leaseDir?: string
  /**
   * Database for leased node IDs: `postgres://user:password@host:5432/db` or
   * `mysql://...` (`mariadb://` is read as `mysql://`). Its password never appears in an
   * error message.
   */
  databaseUrl?: string
  /** `'lease'` (flakery's table, the default) or `'baidu'` (uid-generator's `WORKER_NODE`). */
  databaseMode?: 'lease' | 'baidu'
}

/** The parts of `compose()`. */
export interface ComposeOptions {
  /** Default `'twitter'`. */
  layout?: string | LayoutInfo
  /** Unix milliseconds, rounded down to the layout's tick. */
  timestampMs: number | bigint
  datacenterId?: number | bigint
  workerId?: number | bigint
  sequence?: number | bigint
  /** Values of constant fields; one not given takes its layout default. */
  fields?: Record<string, number | bigint>
}

/** Options of `decode()`. */
export interface DecodeOptions {
  /** Default `'twitter'`. */
  layout?: string | LayoutInfo
}

/**
 * A value of `doctor()`'s report, as `flakery doctor --json` prints it; an integer past 2^53
 * is a `bigint` (`JSON.parse` would round it).
 */
export type DoctorValue = null | boolean | number | bigint | string | DoctorValue[] | DoctorSection

/** A section of `doctor()`'s report: its members as docs/doctor.md lists them. */
export interface DoctorSection {
  [key: string]: DoctorValue
}

/** What `doctor()` found: a note, a warning (with its fix), or a configuration refused. */
export interface DoctorFinding {
  level: 'note' | 'warning' | 'refused'
  /** The section it comes from (`'layout'`, `'clock'`, `'node'`, `'host lease'`, `'lease'`). */
  topic: string
  text: string
  /** What to do about it; empty for a note, or when the text says it. */
  fix: string
}

/** The budgets report of `doctor()` (docs/doctor.md): the keys `flakery doctor --json` has. */
export interface DoctorReport {
  /** `'refused'`: a `Generator` of these options would be refused. */
  status: 'ok' | 'warnings' | 'refused'
  /** `flakery doctor`'s exit status: 0 all well, 1 warnings, 2 refused. */
  exit_code: 0 | 1 | 2
  /** The layout's budget: its end, the 2^53 and 2^63 dates, IDs per second. */
  layout: DoctorSection
  /** Whether the kernel thinks the clock synchronised, its daemon, the step tolerated. */
  clock: DoctorSection
  /** Which source gives the node ID and why, the host lease or the coordinator. */
  node: DoctorSection
  findings: DoctorFinding[]
}

/**
 * The generating calls of a `Client`: own properties of each client, bound to it. Nothing
 * waits on the JavaScript thread: the calls that may wait for a block (an empty stock, a
 * failover, servers that stopped answering) return Promises, which settle within
 * `timeoutMs` and reject with the client's error codes; `close()` rejects the pending ones
 * at once. `await client.nextId()` reads as `await generator.nextId()` does.
 */
export interface Client {
  /**
   * A new ID. Resolved at once when the client's stock holds one (the steady state), else
   * when a block arrives, from a thread of libuv's pool.
   */
  nextId(): Promise<bigint>
  /** As `nextId()`, the ID as a string: decimal unless `options.format` says `'base32'` or `'base62'`. */
  nextIdString(options?: IdStringOptions): Promise<string>
  /**
   * `n` new IDs (`n` up to 2^24), increasing within each block (docs/client.md). Always
   * made on a thread of libuv's pool.
   */
  nextIds(n: number): Promise<BigInt64Array>
  /**
   * A new ID from the client's stock, or `null` when it holds none now (then `nextId()`
   * waits for a block, or says what failed). Never waits.
   */
  tryNextId(): bigint | null
  /** As `tryNextId()`, the ID as a string in `options.format`. */
  tryNextIdString(options?: IdStringOptions): string | null
}

/**
 * Options of `new Client()` (docs/client.md#options). Every key is optional; one not given
 * comes from `FLAKERY_SERVERS`, `FLAKERY_SERVER_TOKEN`, `FLAKERY_LAYOUT`, then the default.
 */
export interface ClientOptions {
  /**
   * Base URLs, `http://host:port` or `https://host:port`: an array, or one string separated
   * by commas.
   */
  servers?: string | string[]
  /** The bearer token; never in an error message. */
  token?: string
  /** The servers' layout, for `decode` (checked against each server). Default `'twitter'`. */
  layout?: string | LayoutInfo
  /** An ID held longer than this is dropped, never handed out. Default 10000. */
  maxAgeMs?: number
  /** Every call settles within this. Default 5000. */
  timeoutMs?: number
  /** One request may take this long before the next server is asked. Default 1000. */
  requestTimeoutMs?: number
  /** The smallest block of IDs asked for (the size adapts to the rate of use). Default 16. */
  minBlock?: number
  /** The largest block of IDs asked for (at most 100000). Default 10000. */
  maxBlock?: number
  /** Ask for the next block before the stock runs out. Default true. */
  prefetch?: boolean
  /** Ask the servers in the order given, the first first. Default false. */
  preferFirst?: boolean
  /** A generator with a node ID of its own, used when every server is unavailable. */
  fallback?: Generator
  /**
   * A PEM file of the CAs an `https://` server's certificate must be signed by. Default
   * `FLAKERY_SERVER_CA`, else the system's roots.
   */
  serverCa?: string
  /** A PEM certificate (and its chain) for mutual TLS. Default `FLAKERY_CLIENT_CERT`. */
  clientCert?: string
  /** The PEM file of its private key. Default `FLAKERY_CLIENT_KEY`; never in a message. */
  clientKey?: string
  /**
   * Send the token over `http://` to a host that is not loopback. Default false: such a
   * client is refused with `invalid_argument`.
   */
  sendTokenInClear?: boolean
}

/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/**
 * A client of one or more `flakery serve` instances, with the calls of a `Generator`: switch
 * between embedded and central with one line (docs/client.md).
 */
export declare class Client {
  /**
   * Options not given come from `FLAKERY_SERVERS`, `FLAKERY_SERVER_TOKEN` and
   * `FLAKERY_LAYOUT`, then the defaults of docs/client.md#options. Asks no server yet.
   */
  constructor(options?: ClientOptions)
  /** Takes an ID apart under the servers' layout, as `decode(id, layout)` does. */
  decode(id: bigint | string | number): DecodedId
  /** The servers' layout as its canonical spec string. */
  get layout(): string
  /** The servers' base URLs. */
  get servers(): Array<string>
  /**
   * Stops the client: the IDs it holds are dropped (never given back); a call waiting for
   * a block fails at once, and every later call fails, with `invalid_argument`. Never
   * waits for a server.
   */
  close(): void
}

/**
 * A generator of IDs: one layout, one node identity, its policies. Never returns the same ID
 * twice, nor a smaller one than it returned before.
 */
export declare class Generator {
  /**
   * Options not given come from the `FLAKERY_*` environment, then the defaults of docs/spec.md#generator-options;
   * an unconfigured generator leases its node ID (see docs/identity.md).
   */
  constructor(options?: GeneratorOptions)
  /**
   * Makes a generator off the JavaScript thread: a promise of it. A generator that leases
   * its node ID from a coordinator (ZooKeeper, a database) claims one first, which takes a
   * round trip or more (seconds when the coordinator is slow); `new Generator` does that
   * on the calling thread, `create` on a thread of libuv's pool. Options as the
   * constructor's: a bad one throws at once; an error of making it (a coordinator that
   * cannot be reached, no node ID free) rejects the promise.
   */
  static create(options?: GeneratorOptions): Promise<Generator>
  /** The layout as its canonical spec string (a preset's name where it is one). */
  get layout(): string
  get datacenterId(): number
  get workerId(): number
  /**
   * Where the node ID came from: `explicit`, `environment`, `hostname`, `zookeeper`,
   * `database` or `host_lease`.
   */
  get source(): 'explicit' | 'environment' | 'hostname' | 'zookeeper' | 'database' | 'host_lease'
  /** Whether `close()` was called. */
  get closed(): boolean
  /** Releases the node ID lease now; every later call fails with `lease_lost`. */
  close(): void
}

/**
 * Builds the ID that `decode` takes apart into these parts. `timestampMs` is rounded down to
 * its tick; every other value must fit its field. `layout` defaults to `twitter`.
 */
export declare function compose(parts: ComposeOptions): bigint

/**
 * Takes an ID apart. `id` is a `bigint`, a decimal string, or a `number` that is a safe
 * integer; `options.layout` (or a spec string in its place) defaults to `twitter`.
 */
export declare function decode(id: bigint | string | number, options?: DecodeOptions | string): DecodedId

/** An ID taken apart by `decode()`. */
export interface DecodedId {
  id: bigint
  /** Unix milliseconds. */
  timestampMs: number
  date: Date
  /**
   * 0 when the layout has no datacenter field. (A bigint if the layout gives the field
   * more than 53 bits; likewise `workerId` and `sequence`.)
   */
  datacenterId: number
  workerId: number
  sequence: number
  /**
   * Every field of the layout by name, constants included, with its raw value (`time` in
   * ticks since the epoch): a number for fields up to 53 bits wide, else a bigint.
   */
  fields: Record<string, number | bigint>
}

/**
 * The budgets report for these options (the others from the `FLAKERY_*` environment, as a
 * `Generator` reads them): `status`, `exit_code`, a member per section, `findings`. Takes no
 * node ID lease. With a coordinator configured it probes it over TCP on the calling thread,
 * as `new Generator` does; without one it reads only this machine's state.
 */
export declare function doctor(options?: GeneratorOptions): DoctorReport

/**
 * The ID a base32 form stands for. Case-insensitive; `O` reads as 0, `I` and `L` as 1. A
 * string of the wrong length, with a character outside the alphabet, or above 2^63-1 throws
 * a `RangeError` with code `invalid_argument` that names the character or the reason.
 */
export declare function fromBase32(text: string): bigint

/** The ID a base62 form stands for (case-sensitive). Bad strings throw as `fromBase32` does. */
export declare function fromBase62(text: string): bigint

/** One field of a layout. */
export interface LayoutField {
  name: string
  kind: 'time' | 'datacenter' | 'worker' | 'sequence' | 'constant'
  bits: number
  /** The bit position of the field's lowest bit. */
  shift: number
  /** The value of a constant field unless a generator is given another. */
  default: number | bigint
}

/** A layout described: `layouts()` and `layoutInfoOf()`. */
export interface LayoutInfo {
  /** The preset's name, or null for a layout that is not a preset. */
  name: string | null
  /** The spec string (the preset's full spec in `layouts()`). */
  spec: string
  /** The shortest spec string that reads back as this layout. */
  canonical: string
  /** One line: fields, epoch, unit, capacity, when it runs out. */
  description: string
  fields: Array<LayoutField>
  totalBits: number
  epochMs: number
  epoch: Date
  /** 'ms', '10ms', 's', or any whole number of them: '5ms', '100ms', '2s'. */
  unit: string
  /** IDs one node can make in one tick. */
  idsPerTick: number
  /** IDs one node can make in one second. */
  idsPerSecond: number
  datacenterIds: number
  workerIds: number
  /** Distinct node identities (datacenter x worker). */
  nodeIds: number
  /** The first Unix millisecond at which no ID can be made any more. */
  exhaustedAtMs: number
  /** Milliseconds from when this object was made until no ID can be made (0 once run out). */
  timeLeftMs: number
  /** IDs are unsigned 64-bit by definition (`discord`): `decode`/`compose` reach 2^64-1. */
  unsigned: boolean
  /** `exhaustedAtMs` as a Date; null when it is past what a Date can hold. */
  exhaustedAt: Date | null
}

/**
 * Parses a layout spec (`'discord'`, `'twitter;epoch=2020-01-01T00:00:00Z'`,
 * `'time:41,worker:10,sequence:12;epoch=1288834974657'`) and describes it; an invalid spec
 * throws a `RangeError` with code `invalid_layout`.
 */
export declare function layoutInfoOf(spec: string): LayoutInfo

/** The presets of docs/spec.md#layouts, in its order, with their fields and capacity. */
export declare function layouts(): Array<LayoutInfo>

/**
 * The 13-character base32 form of an ID (Crockford's alphabet, upper case, zero-padded):
 * sorting these strings sorts the IDs. `id` is as `decode` takes it.
 */
export declare function toBase32(id: bigint | string | number): string

/**
 * The 11-character base62 form of an ID (`0-9A-Za-z`, zero-padded): sorting these strings
 * (by code unit, as `Array.prototype.sort` does) sorts the IDs.
 */
export declare function toBase62(id: bigint | string | number): string
