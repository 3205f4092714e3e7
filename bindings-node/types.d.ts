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
