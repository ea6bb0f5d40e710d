/**
 * Every setting of a node, once: what it accepts (type, bounds or values, of the kinds
 * setting-kinds.ts checks), its default, the placeholder and help line of its flag, and
 * what it means (the comment on its entry).
 * Derived from this table: the `NodeConfig` type, `DEFAULT_CONFIG`, each setting's flag
 * (`--data-dir` for dataDir) and environment variable (`RINGKV_DATA_DIR`), the check of a
 * value (`checkSetting`), and the options of `ringkv node` (cli/commands/node-commands.ts).
 * docs/node.md's table of settings is held to it by test/unit/node/config-doc.test.ts.
 *
 * To add a setting: an entry here (in the place its flag should show in `ringkv node
 * --help`), a row in docs/node.md, and the code that uses it. Rules that tie settings
 * together (TLS needs all three files, ...) are in config.ts.
 *
 * Owns: the settings' names, types, bounds, defaults and help. Must not: read the
 * environment or files, or relate one setting to another (config.ts does).
 */

import { MAX_CLOCK_OFFSET_MS } from './wall-clock.js';
import {
  ConfigError,
  address,
  addresses,
  numberFrom,
  oneOf,
  setting,
  text,
  whole,
  type Accepts,
  type Setting,
} from './setting-kinds.js';

export { ConfigError, type Accepts, type Setting } from './setting-kinds.js';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ID_EXPECTED = 'expected 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit';
/** At least one character. */
const NOT_EMPTY = /^[\s\S]/;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Every setting, in the order `ringkv node --help` lists their flags. */
export const SETTINGS = {
  /** Node id; undefined: the one kept in the data dir, or a new random one. */
  id: setting({
    accepts: text(ID, ID_EXPECTED),
    default: undefined,
    arg: 'id',
    unset: 'kept in the data dir, or `n-` + 12 random hex digits',
    help: (env) => `node id (${env}); default: the one kept in the data dir, or a new random one`,
  }),
  /** host:port the gRPC server binds (clients, peers and admin share it). Port 0: any free port. */
  listen: setting({
    accepts: address({ portZero: true }),
    default: '127.0.0.1:7001',
    arg: 'host:port',
    help: 'address the gRPC server binds',
  }),
  /**
   * host:port peers and clients reach us at. Default: listen; undefined only when listen's
   * port is 0, and the node then advertises the port it bound. Never a wildcard (config.ts).
   */
  advertise: setting({
    accepts: address({ portZero: false }),
    default: undefined,
    arg: 'host:port',
    unset: "the listen address (with the bound port when listen's port is 0)",
    help: (env) =>
      `address peers and clients reach this node at (${env}; default: the listen address; needed when listen is 0.0.0.0 or [::])`,
  }),
  dataDir: setting({
    accepts: text(NOT_EMPTY, 'expected a directory path'),
    default: './data',
    arg: 'dir',
    help: 'data directory',
  }),
  /** host:port of seed nodes; our own address among them is fine (every node gets the same list). */
  seeds: setting({
    accepts: addresses,
    default: [],
    arg: 'list',
    unset: 'none',
    help: 'comma-separated host:port of seed nodes',
  }),
  zone: setting({
    accepts: text(/^[^\s,]{0,256}$/, 'expected at most 256 characters, no spaces or commas'),
    default: '',
    arg: 'zone',
    unset: 'empty',
    help: 'availability zone',
  }),
  rack: setting({
    accepts: text(/^[^\s,]{0,256}$/, 'expected at most 256 characters, no spaces or commas'),
    default: '',
    arg: 'rack',
    unset: 'empty',
    help: 'rack within the zone',
  }),
  /** Relative capacity: ownership is proportional to it. */
  weight: setting({
    accepts: numberFrom(Number.MIN_VALUE, 1000, false),
    default: 1,
    arg: 'w',
    help: 'relative capacity',
  }),
  /** Gossip from another cluster name is refused. */
  clusterName: setting({
    accepts: text(ID, 'expected 1-128 letters, digits, ".", "_" or "-"'),
    default: 'ringkv',
    arg: 'name',
    help: 'cluster name; gossip from other clusters is refused',
  }),
  /** Tokens (virtual nodes) for a node of weight 1. */
  tokens: setting({ accepts: whole(1, 4096), default: 64, arg: 'n', help: 'tokens (virtual nodes) at weight 1' }),
  logLevel: setting({
    accepts: oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'),
    default: 'info',
    arg: 'level',
    help: 'fatal|error|warn|info|debug|trace|silent',
  }),
  /** ms between gossip rounds. */
  gossipIntervalMs: setting({ accepts: whole(10, 60_000), default: 1000, arg: 'ms', help: 'ms between gossip rounds' }),
  /** Phi above which a peer is marked down (8 as in Cassandra; 10–12 on noisy hosts). */
  phiThreshold: setting({
    accepts: numberFrom(1, 100, false),
    default: 8,
    arg: 'phi',
    help: 'phi above which a peer is marked down',
  }),
  /** 'default' (acknowledged once the OS has it) or 'sync' (fsynced): see docs/storage.md. */
  durability: setting({ accepts: oneOf('default', 'sync'), default: 'default', arg: 'mode', help: 'default|sync' }),
  /**
   * Free bytes the data directory's disk keeps: below it the node refuses new writes
   * (RESOURCE_EXHAUSTED, KV_DISK_FULL) and the others take them (storage/disk.ts). Unset: 5% of
   * the disk, at most 1 GiB.
   */
  minFreeDisk: setting({
    accepts: whole(0, 2 ** 50),
    default: undefined,
    arg: 'bytes',
    unset: '5% of the disk, at most 1 GiB',
    help: (env) =>
      `free bytes the data directory's disk keeps; below them the node takes no new writes (${env}; default 5% of the disk, at most 1 GiB)`,
  }),
  /** ms to let in-flight requests finish at shutdown before cutting them off. */
  shutdownGraceMs: setting({
    accepts: whole(0, 600_000),
    default: 10_000,
    arg: 'ms',
    help: 'ms in-flight requests get at shutdown',
  }),
  /** ms a stopping node keeps serving after telling its peers, before it refuses new calls (docs/operations.md#drain). */
  drainMs: setting({
    accepts: whole(0, 60_000),
    default: 1000,
    arg: 'ms',
    help: 'ms a stopping node keeps serving after telling its peers it stops',
  }),
  /** At most this many ms a restarted node reports NOT_SERVING while peers still hold hints for it. */
  catchUpMs: setting({
    accepts: whole(0, 600_000),
    default: 30_000,
    arg: 'ms',
    help: 'at most this long a restarted node reports NOT_SERVING while peers hold hints for it',
  }),
  /** Replicas per key (N). A cluster setting: give every node the same value. */
  replicas: setting({
    accepts: whole(1, 16),
    default: 3,
    arg: 'n',
    help: 'replicas per key, N; the same on every node',
  }),
  /** ms a client request may take when the client sets no shorter deadline. */
  requestTimeoutMs: setting({
    accepts: whole(1, 600_000),
    default: 5000,
    arg: 'ms',
    help: 'longest a client request may take',
  }),
  /** Client requests a node coordinates at once; more are refused with RESOURCE_EXHAUSTED. */
  maxInFlight: setting({
    accepts: whole(1, 1_000_000),
    default: 1024,
    arg: 'n',
    help: 'client requests coordinated at once; more get RESOURCE_EXHAUSTED',
  }),
  /** TCP connections a node serves at once; more are answered RESOURCE_EXHAUSTED and closed. */
  maxConnections: setting({
    accepts: whole(1, 1_000_000),
    default: 1024,
    arg: 'n',
    help: 'TCP connections served at once; more are answered RESOURCE_EXHAUSTED and closed',
  }),
  /** Calls (unary or streams) open at once on one connection; more get RESOURCE_EXHAUSTED. */
  maxCallsPerConnection: setting({
    accepts: whole(1, 100_000),
    default: 1024,
    arg: 'n',
    help: 'calls open at once on one connection; more get RESOURCE_EXHAUSTED',
  }),
  /** Hinted handoff throttle, bytes per second per node (Cassandra's default: 1 MiB/s). */
  hintBytesPerSecond: setting({
    accepts: whole(1024, 1 << 30),
    default: 1 << 20,
    arg: 'n',
    help: 'hinted handoff throttle',
  }),
  /**
   * Id of a dead member this new node replaces (Cassandra's replace_address): it takes the
   * dead node's tokens and streams its ranges from the surviving replicas before serving.
   */
  replace: setting({
    accepts: text(ID, ID_EXPECTED),
    default: undefined,
    arg: 'id',
    unset: 'none',
    help: 'a dead member this new node replaces: it takes its tokens and streams its ranges from the survivors',
  }),
  /**
   * 'auto': a new node joins by itself (Cassandra's auto_bootstrap); 'manual': it waits as a
   * standby until an operator admits it (ringkv plan join ID, then ringkv commit).
   */
  join: setting({
    accepts: oneOf('auto', 'manual'),
    default: 'auto',
    arg: 'mode',
    help: 'auto: join by itself; manual: wait as a standby until admitted by ringkv plan/commit',
  }),
  /**
   * The governor keeps the foreground p99 under this many times its idle value while range
   * streams or hint replay run, by slowing them (streaming/governor.ts); 0 turns it off and
   * background work runs at its configured rates.
   */
  backgroundLatencyFactor: setting({
    accepts: numberFrom(0, 100, false, { from: 1, expected: 'expected 0 (no governor) or a factor of at least 1' }),
    default: 2,
    arg: 'f',
    help: 'slow streaming and hint replay while the foreground p99 is over f × its idle value; 0 = off',
  }),
  /**
   * Range streaming throttle: bytes per second a node sends to nodes that gain its ranges,
   * all streams together (Cassandra's default: 24 MiB/s); 0 is unthrottled.
   */
  streamBytesPerSecond: setting({
    accepts: whole(0, 2 ** 40, { from: 1024, expected: 'expected 0 (unthrottled) or at least 1024 bytes per second' }),
    default: 24 << 20,
    arg: 'n',
    help: 'range streaming throttle, all streams a node sends; 0 = unthrottled',
  }),
  /**
   * How long a deleted key keeps its tombstone at least (Cassandra's gc_grace_seconds);
   * it goes only once a repair has also confirmed every replica holds it (repair/runs.ts).
   */
  tombstoneGraceMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: 10 * DAY_MS,
    arg: 'ms',
    help: 'a deleted key keeps its tombstone at least this long, and until a repair confirmed it on every replica',
  }),
  /**
   * Bounded clocks (docs/causality.md#bounded-clocks): a key's clock is pruned once its
   * history has not changed for this long and a repair confirmed it on every replica
   * since; hints older than this are dropped, not delivered. Unset: the tombstone grace.
   */
  clockPruneGraceMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: undefined,
    arg: 'ms',
    unset: 'the tombstone grace (`--tombstone-grace-ms`)',
    help: "prune a key's clock once unchanged this long and confirmed by a repair; hints older than this are dropped",
  }),
  /**
   * Background anti-entropy: each range a node is the first replica of is repaired once
   * per this many ms (repair/runs.ts); 0 turns it off (ringkv repair only).
   */
  repairIntervalMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: 10 * 60_000,
    arg: 'ms',
    help: 'background repair: each range once per this many ms; 0 = off, ringkv repair only',
  }),
  /** Background repair's pace: bytes of a range's data read per second (times the governor's share). */
  repairBytesPerSecond: setting({
    accepts: whole(1024, 2 ** 40),
    default: 8 << 20,
    arg: 'n',
    help: "background repair's pace, bytes of data read per second",
  }),
  /**
   * The verification pass (repair/verify.ts): every record read again from disk once per
   * this many ms, a corrupt one restored from its replicas; 0 turns it off.
   */
  verifyIntervalMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: DAY_MS,
    arg: 'ms',
    help: 'verification pass: every record read again from disk once per this many ms, a corrupt one restored from its replicas; 0 = off',
  }),
  /** The verification pass's pace: bytes read per second (times the governor's share). */
  verifyBytesPerSecond: setting({
    accepts: whole(1024, 2 ** 40),
    default: 8 << 20,
    arg: 'n',
    help: "verification pass's pace, bytes read per second",
  }),
  /**
   * Anti-entropy trees kept on write (storage/kept-trees.ts): on, a repair of two replicas
   * in sync compares roots and reads no records; off, every repair builds its trees by a
   * scan (the behaviour before, and an escape hatch).
   */
  keptTrees: setting({
    accepts: oneOf('on', 'off'),
    default: 'on',
    arg: 'mode',
    help: 'on|off: anti-entropy trees kept on write (off: every repair scans)',
  }),
  /** Depth of every kept tree: 16^depth leaves per unit (3: 4,096 leaves, 48 KiB). Replicas compare kept trees only at equal depths. */
  treeDepth: setting({
    accepts: whole(2, 4),
    default: 3,
    arg: 'n',
    help: 'depth of kept trees: 16^n leaves per range and N class',
  }),
  /**
   * Each kept tree is rebuilt by a scan this long after its last build (Riak's rebuild
   * wait: 336 h), the kept tree serving meanwhile, and compared with it (a difference is
   * logged and counted); 0: never.
   */
  treeRebuildIntervalMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: 14 * DAY_MS,
    arg: 'ms',
    help: 'kept trees: rebuild each by a scan this long after its last build; 0 = never',
  }),
  /** Plus a random delay up to this, drawn per build, so that trees built together are not rebuilt together (Riak: up to 96 h). */
  treeRebuildJitterMs: setting({
    accepts: whole(0, 365 * DAY_MS),
    default: 4 * DAY_MS,
    arg: 'ms',
    help: 'kept trees: random extra delay up to this before each rebuild',
  }),
  /**
   * A replica down longer than this, ms, gets no more hints from coordinators (Cassandra's
   * max_hint_window): what it misses is left to anti-entropy, and counted.
   */
  maxHintWindowMs: setting({
    accepts: whole(0, DAY_MS),
    default: 3 * 60 * 60 * 1000,
    arg: 'ms',
    help: 'a replica down longer than this gets no more hints; its misses are left to anti-entropy',
  }),
  /**
   * 'digest' (the default): a get reads R replicas' records and the others' digests only
   * (Cassandra's digest reads); 'full': every replica's record.
   */
  readMode: setting({
    accepts: oneOf('digest', 'full'),
    default: 'digest',
    arg: 'mode',
    help: "digest: a get reads R replicas' records and the others' digests; full: every replica's record",
  }),
  /**
   * PEM files of this node's certificate, its key and the cluster's CA (docs/security.md).
   * All three or none (config.ts): with them the port speaks TLS, peers are dialled with this
   * certificate, and node-to-node calls need a certificate with role node. Reloaded on
   * SIGHUP and when the files change.
   */
  tlsCert: setting({
    accepts: text(NOT_EMPTY, 'expected a file path'),
    default: undefined,
    arg: 'file',
    unset: 'off',
    help: (env) =>
      `PEM certificate of this node, role node (${env}); with --tls-key and --tls-ca the port speaks TLS and peers must present node certificates`,
  }),
  tlsKey: setting({
    accepts: text(NOT_EMPTY, 'expected a file path'),
    default: undefined,
    arg: 'file',
    unset: 'off',
    help: 'PEM private key of --tls-cert',
  }),
  tlsCa: setting({
    accepts: text(NOT_EMPTY, 'expected a file path'),
    default: undefined,
    arg: 'file',
    unset: 'off',
    help: (env) =>
      `PEM CA bundle every cluster certificate chains to (${env}); the three files reload on SIGHUP or when they change`,
  }),
  /** 'cert': key/value calls need a certificate from the cluster's CA (TLS only); 'none': any caller. */
  clientAuth: setting({
    accepts: oneOf('none', 'cert'),
    default: 'none',
    arg: 'mode',
    help: 'none|cert: cert makes key/value calls present a certificate from the CA',
  }),
  /**
   * 'credential': the calls that read the cluster's state (Admin Status, Ring, Endpoints,
   * Transfers, RepairStatus) need a certificate from the cluster's CA or the admin token,
   * and the HTTP port's /metrics and /api/* the admin token; 'none': anyone who reaches the port.
   */
  readAuth: setting({
    accepts: oneOf('none', 'credential'),
    default: 'none',
    arg: 'mode',
    help: "none|credential: credential makes the calls that read the cluster's state (status, ring, transfers; HTTP /metrics and /api) present a certificate from the CA or the admin token",
  }),
  /**
   * File holding the admin bearer token: calls that change the cluster accept it in place of
   * an admin certificate (and need it, with TLS off). Undefined: none.
   */
  adminTokenFile: setting({
    accepts: text(NOT_EMPTY, 'expected a file path'),
    default: undefined,
    arg: 'file',
    unset: 'none',
    help: 'file holding a bearer token that calls changing the cluster accept instead of an admin certificate',
  }),
  /**
   * ms a range being pulled waits for its leaving replica (the preferred source) while
   * that node is down, before pulling from every replica that keeps it instead.
   */
  leaverWaitMs: setting({
    accepts: whole(0, DAY_MS),
    default: 60_000,
    arg: 'ms',
    help: 'how long a range waits for its leaving replica while it is down before pulling from the other replicas',
  }),
  /**
   * Added to this node's wall clock (node/wall-clock.ts), ms. For fault-injection tests,
   * which skew each node's clock; 0 in production.
   */
  clockOffsetMs: setting({
    accepts: whole(-MAX_CLOCK_OFFSET_MS, MAX_CLOCK_OFFSET_MS),
    default: 0,
    arg: 'ms',
    help: "fault injection: add this to the node's wall clock",
  }),
  /**
   * host:port of the node's HTTP server: Prometheus /metrics and the status page
   * (node/http/http-server.ts); undefined: none.
   */
  http: setting({
    accepts: address({ portZero: true, off: true }),
    default: undefined,
    arg: 'host:port',
    unset: 'off',
    help: (env) => `serve Prometheus /metrics and the status page here; off = none (${env}; default off)`,
  }),
  /**
   * 'on' lets the admin SetClockOffset call change the clock offset while the node runs
   * (test/jepsen's clock nemesis). 'off', the default, refuses it.
   */
  faultInjection: setting({
    accepts: oneOf('off', 'on'),
    default: 'off',
    arg: 'on|off',
    help: 'on: the admin SetClockOffset call may skew the clock while the node runs; for test/jepsen only',
  }),
  /**
   * ms ownership must stand still, with no topology change running, before a node deletes
   * the data of ranges it no longer replicates by itself (node/topology/auto-cleanup.ts); 0 = never
   * (ringkv cleanup only).
   */
  cleanupAfterMs: setting({
    accepts: whole(0, 30 * DAY_MS),
    default: 60 * 60 * 1000,
    arg: 'ms',
    help: 'delete data of ranges this node no longer replicates once ownership stood still this long; 0 = only ringkv cleanup',
  }),
} satisfies Record<string, Setting<unknown>>;

export type SettingName = keyof typeof SETTINGS;

/** A node's settings, resolved (config.ts): each as its entry in SETTINGS accepts it. */
export type NodeConfig = { readonly [K in SettingName]: (typeof SETTINGS)[K] extends Setting<infer T> ? T : never };

/** Every setting's name, in the table's order. */
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** Setting name → its flag: `--data-dir` for dataDir. */
export function flagOf(name: SettingName): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Setting name → its environment variable: `RINGKV_DATA_DIR` for dataDir. */
export function envOf(name: SettingName): string {
  return `RINGKV_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** Each setting's name → `value(name)`. */
const byName = <V>(value: (name: SettingName) => V): Record<SettingName, V> =>
  Object.fromEntries(SETTING_NAMES.map((k) => [k, value(k)])) as Record<SettingName, V>;

export const DEFAULT_CONFIG: NodeConfig = byName((k) => SETTINGS[k].default) as NodeConfig;

/** Setting name → environment variable. */
export const ENV_NAMES: Record<SettingName, string> = byName(envOf);

/** Whether the default is a value to show (not undefined, '' or an empty list). */
export function hasDefault(name: SettingName): boolean {
  const d: unknown = SETTINGS[name].default;
  return d !== undefined && d !== '' && !(Array.isArray(d) && d.length === 0);
}

/**
 * `value`, given for setting `name` by `from` (a flag, a variable, the config file), as the
 * setting takes it; else a ConfigError: "--tokens: expected a whole number from 1 to 4096, got "0"".
 */
export function checkSetting<K extends SettingName>(name: K, value: unknown, from: string): NodeConfig[K] {
  const fail = (expected: string): never => {
    throw new ConfigError(`${from}: ${expected}, got ${JSON.stringify(value)}`);
  };
  return (SETTINGS[name].accepts as Accepts<unknown>).parse(value, fail) as NodeConfig[K];
}
