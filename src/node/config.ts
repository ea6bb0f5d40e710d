/**
 * A node's configuration: command-line flags over environment variables over a JSON
 * config file over defaults. Every setting is checked here, once, with a message that
 * names the setting, where it came from and what is accepted.
 *
 * Owns: names, defaults, units and checks of settings. Must not: start anything.
 */

import { readFileSync } from 'node:fs';
import { isAddress } from '../membership/endpoint.js';
import { MAX_CLOCK_OFFSET_MS } from './wall-clock.js';

export interface NodeConfig {
  /** Node id; undefined: the one kept in the data dir, or a new random one. */
  readonly id: string | undefined;
  /** host:port the gRPC server binds (clients, peers and admin share it). Port 0: any free port. */
  readonly listen: string;
  /**
   * host:port peers and clients reach us at. Default: listen; undefined only when listen's
   * port is 0, and the node then advertises the port it bound. Never a wildcard.
   */
  readonly advertise: string | undefined;
  readonly dataDir: string;
  /** host:port of seed nodes; our own address among them is fine (every node gets the same list). */
  readonly seeds: readonly string[];
  readonly zone: string;
  readonly rack: string;
  /** Relative capacity: ownership is proportional to it. */
  readonly weight: number;
  /** Gossip from another cluster name is refused. */
  readonly clusterName: string;
  /** Tokens (virtual nodes) for a node of weight 1. */
  readonly tokens: number;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** ms between gossip rounds. */
  readonly gossipIntervalMs: number;
  /** Phi above which a peer is marked down (8 as in Cassandra; 10–12 on noisy hosts). */
  readonly phiThreshold: number;
  /** 'default' (acknowledged once the OS has it) or 'sync' (fsynced): see docs/storage.md. */
  readonly durability: 'default' | 'sync';
  /** ms to let in-flight requests finish at shutdown before cutting them off. */
  readonly shutdownGraceMs: number;
  /** ms a stopping node keeps serving after telling its peers, before it refuses new calls (docs/operations.md#drain). */
  readonly drainMs: number;
  /** At most this many ms a restarted node reports NOT_SERVING while peers still hold hints for it. */
  readonly catchUpMs: number;
  /** Replicas per key (N). A cluster setting: give every node the same value. */
  readonly replicas: number;
  /** ms a client request may take when the client sets no shorter deadline. */
  readonly requestTimeoutMs: number;
  /** Client requests a node coordinates at once; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxInFlight: number;
  /** TCP connections a node serves at once; more are answered RESOURCE_EXHAUSTED and closed. */
  readonly maxConnections: number;
  /** Calls (unary or streams) open at once on one connection; more get RESOURCE_EXHAUSTED. */
  readonly maxCallsPerConnection: number;
  /** Hinted handoff throttle, bytes per second per node (Cassandra's default: 1 MiB/s). */
  readonly hintBytesPerSecond: number;
  /**
   * Range streaming throttle: bytes per second a node sends to nodes that gain its ranges,
   * all streams together (Cassandra's default: 24 MiB/s); 0 is unthrottled.
   */
  readonly streamBytesPerSecond: number;
  /**
   * Id of a dead member this new node replaces (Cassandra's replace_address): it takes the
   * dead node's tokens and streams its ranges from the surviving replicas before serving.
   */
  readonly replace: string | undefined;
  /**
   * The governor keeps the foreground p99 under this many times its idle value while range
   * streams or hint replay run, by slowing them (streaming/governor.ts); 0 turns it off and
   * background work runs at its configured rates.
   */
  readonly backgroundLatencyFactor: number;
  /**
   * 'auto': a new node joins by itself (Cassandra's auto_bootstrap); 'manual': it waits as a
   * standby until an operator admits it (ringkv plan join ID, then ringkv commit).
   */
  readonly join: 'auto' | 'manual';
  /**
   * ms ownership must stand still, with no topology change running, before a node deletes
   * the data of ranges it no longer replicates by itself (node/auto-cleanup.ts); 0 = never
   * (ringkv cleanup only).
   */
  readonly cleanupAfterMs: number;
  /**
   * ms a range being pulled waits for its leaving replica (the preferred source) while
   * that node is down, before pulling from every replica that keeps it instead.
   */
  readonly leaverWaitMs: number;
  /**
   * A replica down longer than this, ms, gets no more hints from coordinators (Cassandra's
   * max_hint_window): what it misses is left to anti-entropy, and counted.
   */
  readonly maxHintWindowMs: number;
  /**
   * Background anti-entropy: each range a node is the first replica of is repaired once
   * per this many ms (repair/runs.ts); 0 turns it off (ringkv repair only).
   */
  readonly repairIntervalMs: number;
  /** Background repair's pace: bytes of a range's data read per second (times the governor's share). */
  readonly repairBytesPerSecond: number;
  /**
   * How long a deleted key keeps its tombstone at least (Cassandra's gc_grace_seconds);
   * it goes only once a repair has also confirmed every replica holds it (repair/runs.ts).
   */
  readonly tombstoneGraceMs: number;
  /**
   * Added to this node's wall clock (node/wall-clock.ts), ms. For fault-injection tests,
   * which skew each node's clock; 0 in production.
   */
  readonly clockOffsetMs: number;
  /**
   * 'on' lets the admin SetClockOffset call change the clock offset while the node runs
   * (test/jepsen's clock nemesis). 'off', the default, refuses it.
   */
  readonly faultInjection: 'off' | 'on';
  /**
   * host:port of the node's HTTP server: Prometheus /metrics and the status page
   * (node/http-server.ts); undefined: none.
   */
  readonly http: string | undefined;
  /**
   * 'digest' (the default): a get reads R replicas' records and the others' digests only
   * (Cassandra's digest reads); 'full': every replica's record.
   */
  readonly readMode: 'digest' | 'full';
  /**
   * PEM files of this node's certificate, its key and the cluster's CA (docs/security.md).
   * All three or none: with them the port speaks TLS, peers are dialled with this
   * certificate, and node-to-node calls need a certificate with role node. Reloaded on
   * SIGHUP and when the files change.
   */
  readonly tlsCert: string | undefined;
  readonly tlsKey: string | undefined;
  readonly tlsCa: string | undefined;
  /** 'cert': key/value calls need a certificate from the cluster's CA (TLS only); 'none': any caller. */
  readonly clientAuth: 'none' | 'cert';
  /**
   * 'credential': the calls that read the cluster's state (Admin Status, Ring, Endpoints,
   * Transfers, RepairStatus) need a certificate from the cluster's CA or the admin token,
   * and the HTTP port's /metrics and /api/* the admin token; 'none': anyone who reaches the port.
   */
  readonly readAuth: 'none' | 'credential';
  /**
   * File holding the admin bearer token: calls that change the cluster accept it in place of
   * an admin certificate (and need it, with TLS off). Undefined: none.
   */
  readonly adminTokenFile: string | undefined;
}

export const DEFAULT_CONFIG: NodeConfig = {
  id: undefined,
  listen: '127.0.0.1:7001',
  advertise: undefined,
  dataDir: './data',
  seeds: [],
  zone: '',
  rack: '',
  weight: 1,
  clusterName: 'ringkv',
  tokens: 64,
  logLevel: 'info',
  gossipIntervalMs: 1000,
  phiThreshold: 8,
  durability: 'default',
  shutdownGraceMs: 10_000,
  drainMs: 1000,
  catchUpMs: 30_000,
  replicas: 3,
  requestTimeoutMs: 5000,
  maxInFlight: 1024,
  maxConnections: 1024,
  maxCallsPerConnection: 1024,
  hintBytesPerSecond: 1 << 20,
  streamBytesPerSecond: 24 << 20,
  replace: undefined,
  backgroundLatencyFactor: 2,
  join: 'auto',
  cleanupAfterMs: 60 * 60 * 1000,
  leaverWaitMs: 60_000,
  maxHintWindowMs: 3 * 60 * 60 * 1000,
  repairIntervalMs: 24 * 60 * 60 * 1000,
  repairBytesPerSecond: 8 << 20,
  tombstoneGraceMs: 10 * 24 * 60 * 60 * 1000,
  clockOffsetMs: 0,
  faultInjection: 'off',
  http: undefined,
  readMode: 'digest',
  tlsCert: undefined,
  tlsKey: undefined,
  tlsCa: undefined,
  clientAuth: 'none',
  readAuth: 'none',
  adminTokenFile: undefined,
};

/** Setting name → environment variable. */
export const ENV_NAMES: Record<keyof NodeConfig, string> = {
  id: 'RINGKV_ID',
  listen: 'RINGKV_LISTEN',
  advertise: 'RINGKV_ADVERTISE',
  dataDir: 'RINGKV_DATA_DIR',
  seeds: 'RINGKV_SEEDS',
  zone: 'RINGKV_ZONE',
  rack: 'RINGKV_RACK',
  weight: 'RINGKV_WEIGHT',
  clusterName: 'RINGKV_CLUSTER_NAME',
  tokens: 'RINGKV_TOKENS',
  logLevel: 'RINGKV_LOG_LEVEL',
  gossipIntervalMs: 'RINGKV_GOSSIP_INTERVAL_MS',
  phiThreshold: 'RINGKV_PHI_THRESHOLD',
  durability: 'RINGKV_DURABILITY',
  shutdownGraceMs: 'RINGKV_SHUTDOWN_GRACE_MS',
  drainMs: 'RINGKV_DRAIN_MS',
  catchUpMs: 'RINGKV_CATCH_UP_MS',
  replicas: 'RINGKV_REPLICAS',
  requestTimeoutMs: 'RINGKV_REQUEST_TIMEOUT_MS',
  maxInFlight: 'RINGKV_MAX_IN_FLIGHT',
  maxConnections: 'RINGKV_MAX_CONNECTIONS',
  maxCallsPerConnection: 'RINGKV_MAX_CALLS_PER_CONNECTION',
  hintBytesPerSecond: 'RINGKV_HINT_BYTES_PER_SECOND',
  streamBytesPerSecond: 'RINGKV_STREAM_BYTES_PER_SECOND',
  replace: 'RINGKV_REPLACE',
  backgroundLatencyFactor: 'RINGKV_BACKGROUND_LATENCY_FACTOR',
  join: 'RINGKV_JOIN',
  cleanupAfterMs: 'RINGKV_CLEANUP_AFTER_MS',
  leaverWaitMs: 'RINGKV_LEAVER_WAIT_MS',
  maxHintWindowMs: 'RINGKV_MAX_HINT_WINDOW_MS',
  repairIntervalMs: 'RINGKV_REPAIR_INTERVAL_MS',
  repairBytesPerSecond: 'RINGKV_REPAIR_BYTES_PER_SECOND',
  tombstoneGraceMs: 'RINGKV_TOMBSTONE_GRACE_MS',
  clockOffsetMs: 'RINGKV_CLOCK_OFFSET_MS',
  faultInjection: 'RINGKV_FAULT_INJECTION',
  http: 'RINGKV_HTTP',
  readMode: 'RINGKV_READ_MODE',
  tlsCert: 'RINGKV_TLS_CERT',
  tlsKey: 'RINGKV_TLS_KEY',
  tlsCa: 'RINGKV_TLS_CA',
  clientAuth: 'RINGKV_CLIENT_AUTH',
  readAuth: 'RINGKV_READ_AUTH',
  adminTokenFile: 'RINGKV_ADMIN_TOKEN_FILE',
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Raw = Partial<Record<keyof NodeConfig, unknown>>;


const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Resolve the configuration. `flags` are what the command line set (undefined: not set);
 * `env` is usually process.env; `configFile` a JSON file of the same settings.
 */
export function resolveConfig(flags: Raw, env: NodeJS.ProcessEnv, configFile?: string): NodeConfig {
  const file: Raw = configFile === undefined ? {} : readConfigFile(configFile);
  const out: Record<string, unknown> = {};
  const sources: Partial<Record<keyof NodeConfig, string>> = {};
  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof NodeConfig)[]) {
    const envValue = env[ENV_NAMES[key]];
    const [value, from] =
      flags[key] !== undefined
        ? [flags[key], `--${kebab(key)}`]
        : envValue !== undefined && envValue !== ''
          ? [envValue, ENV_NAMES[key]]
          : file[key] !== undefined
            ? [file[key], `${key} in ${configFile}`]
            : [DEFAULT_CONFIG[key], 'default'];
    out[key] = from === 'default' ? value : check(key, value, from);
    sources[key] = from;
  }
  out.advertise = advertised(out.listen as string, out.advertise as string | undefined, sources);
  const tls = (['tlsCert', 'tlsKey', 'tlsCa'] as const).filter((k) => out[k] !== undefined);
  if (tls.length > 0 && tls.length < 3)
    throw new ConfigError(`TLS needs all three of --tls-cert, --tls-key and --tls-ca (or ${ENV_NAMES.tlsCert}, ${ENV_NAMES.tlsKey}, ${ENV_NAMES.tlsCa}); only ${tls.map((k) => `--${kebab(k)}`).join(' and ')} given`);
  if (out.clientAuth === 'cert' && tls.length === 0)
    throw new ConfigError(`${sources.clientAuth} cert needs TLS: give --tls-cert, --tls-key and --tls-ca, or leave client auth at none`);
  if (out.readAuth === 'credential' && tls.length === 0 && out.adminTokenFile === undefined)
    throw new ConfigError(`${sources.readAuth} credential needs a credential to check: TLS (--tls-cert, --tls-key, --tls-ca) or --admin-token-file`);
  if (out.readAuth === 'credential' && out.http !== undefined && out.adminTokenFile === undefined)
    throw new ConfigError(`${sources.readAuth} credential with --http needs --admin-token-file: the HTTP port checks the admin token (Authorization: Bearer), not certificates; give one, or serve no HTTP port`);
  return out as unknown as NodeConfig;
}

/** 0.0.0.0 and IPv6's :: (in any spelling): bind addresses, never addresses to reach. */
function isWildcard(address: string): boolean {
  const host = address.slice(0, address.lastIndexOf(':'));
  return host === '' || host === '0.0.0.0' || /^\[[0:.]*\]$/.test(host);
}

/**
 * The address the node gossips to peers and clients: --advertise, else the listen address.
 * Peers dial it, so a wildcard is refused rather than replaced by a guess (127.0.0.1 works
 * on one machine and nowhere else).
 */
function advertised(listen: string, advertise: string | undefined, sources: Partial<Record<keyof NodeConfig, string>>): string | undefined {
  const said = (key: 'listen' | 'advertise', value: string): string => {
    const from = sources[key] ?? 'default';
    return from.startsWith('--') || from.startsWith('RINGKV_') ? `${from} ${value}` : `${key} ${value} (${from})`;
  };
  if (advertise !== undefined) {
    if (isWildcard(advertise)) throw new ConfigError(`${said('advertise', advertise)} is a wildcard, not an address peers can reach: give the host:port other nodes and clients connect to`);
    return advertise;
  }
  if (isWildcard(listen)) {
    throw new ConfigError(
      `${said('listen', listen)} binds every interface, so peers need to be told where to reach this node: pass --advertise host:port (or ${ENV_NAMES.advertise}), the address other nodes and clients connect to`,
    );
  }
  // Port 0: the port is known once bound; the node advertises listen's host with it.
  return /:0$/.test(listen) ? undefined : listen;
}

function readConfigFile(path: string): Raw {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(`cannot read config file ${path}: ${(e as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object like {"listen": "127.0.0.1:7001"}`);
  }
  for (const key of Object.keys(parsed)) {
    if (!Object.hasOwn(DEFAULT_CONFIG, key)) {
      throw new ConfigError(`config file ${path}: unknown setting "${key}"; known: ${Object.keys(DEFAULT_CONFIG).join(', ')}`);
    }
  }
  return parsed as Raw;
}

function kebab(s: string): string {
  return s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function check(key: keyof NodeConfig, value: unknown, from: string): unknown {
  const fail = (what: string): never => {
    throw new ConfigError(`${from}: ${what}, got ${JSON.stringify(value)}`);
  };
  const str = (): string => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fail('expected a string'));
  const num = (min: number, max: number, integer: boolean): number => {
    const n = typeof value === 'number' ? value : Number(str());
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      fail(`expected ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
    }
    return n;
  };
  const address = (v: string, allowPortZero: boolean): string => {
    if (isAddress(v) || (allowPortZero && /:0$/.test(v) && isAddress(`${v.slice(0, -2)}:1`))) return v;
    return fail('expected host:port, like 127.0.0.1:7001');
  };
  switch (key) {
    case 'id':
    case 'replace': {
      const v = str();
      return ID.test(v) ? v : fail('expected 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    case 'listen':
      return address(str(), true);
    case 'advertise':
      return address(str(), false);
    case 'dataDir': {
      const v = str();
      return v.length > 0 ? v : fail('expected a directory path');
    }
    case 'seeds': {
      const list = Array.isArray(value) ? value.map(String) : str().split(',');
      return list.map((s) => s.trim()).filter((s) => s.length > 0).map((s) => address(s, false));
    }
    case 'zone':
    case 'rack': {
      const v = str();
      return v.length <= 256 && !/[\s,]/.test(v) ? v : fail('expected at most 256 characters, no spaces or commas');
    }
    case 'clusterName': {
      const v = str();
      return ID.test(v) ? v : fail('expected 1-128 letters, digits, ".", "_" or "-"');
    }
    case 'weight':
      return num(Number.MIN_VALUE, 1000, false);
    case 'tokens':
      return num(1, 4096, true);
    case 'logLevel': {
      const v = str();
      return LOG_LEVELS.includes(v) ? v : fail(`expected one of ${LOG_LEVELS.join(', ')}`);
    }
    case 'gossipIntervalMs':
      return num(10, 60_000, true);
    case 'phiThreshold':
      return num(1, 100, false);
    case 'durability': {
      const v = str();
      return v === 'default' || v === 'sync' ? v : fail("expected 'default' or 'sync'");
    }
    case 'shutdownGraceMs':
    case 'catchUpMs':
      return num(0, 600_000, true);
    case 'drainMs':
      return num(0, 60_000, true);
    case 'replicas':
      return num(1, 16, true);
    case 'requestTimeoutMs':
      return num(1, 600_000, true);
    case 'maxInFlight':
    case 'maxConnections':
      return num(1, 1_000_000, true);
    case 'maxCallsPerConnection':
      return num(1, 100_000, true);
    case 'hintBytesPerSecond':
      return num(1024, 1 << 30, true);
    case 'join': {
      const v = str();
      return v === 'auto' || v === 'manual' ? v : fail("expected 'auto' or 'manual'");
    }
    case 'backgroundLatencyFactor': {
      const n = num(0, 100, false);
      return n === 0 || n >= 1 ? n : fail('expected 0 (no governor) or a factor of at least 1');
    }
    case 'tombstoneGraceMs':
    case 'repairIntervalMs':
      return num(0, 365 * 24 * 60 * 60 * 1000, true);
    case 'repairBytesPerSecond':
      return num(1024, 2 ** 40, true);
    case 'maxHintWindowMs':
    case 'leaverWaitMs':
      return num(0, 24 * 60 * 60 * 1000, true);
    case 'clockOffsetMs':
      return num(-MAX_CLOCK_OFFSET_MS, MAX_CLOCK_OFFSET_MS, true);
    case 'readMode': {
      const v = str();
      return v === 'digest' || v === 'full' ? v : fail("expected 'digest' or 'full'");
    }
    case 'faultInjection': {
      const v = str();
      return v === 'off' || v === 'on' ? v : fail("expected 'off' or 'on'");
    }
    case 'cleanupAfterMs':
      return num(0, 30 * 24 * 60 * 60 * 1000, true);
    case 'http': {
      // 'off' spelled out turns it off (an env var or config file may need to say so).
      const v = str();
      return v === 'off' ? undefined : address(v, true);
    }
    case 'tlsCert':
    case 'tlsKey':
    case 'tlsCa':
    case 'adminTokenFile': {
      const v = str();
      return v.length > 0 ? v : fail('expected a file path');
    }
    case 'clientAuth': {
      const v = str();
      return v === 'none' || v === 'cert' ? v : fail("expected 'none' or 'cert'");
    }
    case 'readAuth': {
      const v = str();
      return v === 'none' || v === 'credential' ? v : fail("expected 'none' or 'credential'");
    }
    case 'streamBytesPerSecond': {
      const n = num(0, 2 ** 40, true);
      return n === 0 || n >= 1024 ? n : fail('expected 0 (unthrottled) or at least 1024 bytes per second');
    }
  }
}
