/**
 * What a node does before its parts exist (RingkvNode.start, node.ts): read its data dir
 * (identity, members, checkpoints, buckets, purged deletions, staged changes), open its
 * store, and make the gRPC server and listen on --listen.
 *
 * Owns: the store's options (kept trees, sibling policy, disk floor) and the server's
 * options. Must not: build the node's parts or start timers (node.ts does).
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Store, type KeptTreesOptions } from '../storage/index.js';
import type { EndpointState } from '../membership/endpoint.js';
import { NODE_MAX_MESSAGE_BYTES } from '../transport/protos.js';
import { Admission, GuardedServer, listenAdmitted } from '../transport/admission.js';
import type { NodeSecurity } from '../security/node-security.js';
import { Checkpoints } from '../streaming/checkpoints.js';
import { Throttle } from '../streaming/throttle.js';
import { EMPTY_STAGE, type Stage } from '../cluster/stage.js';
import { keyClasses } from '../cluster/n-classes.js';
import { bucketOf, type BucketTable } from '../buckets/index.js';
import type { NodeConfig } from './config.js';
import { loadIdentity, loadMembers, saveIdentity, type Identity } from './identity.js';
import type { WallClock } from './wall-clock.js';
import { loadBuckets } from './bucket-sync.js';
import { loadPurged } from './bucket-purge.js';
import { loadStage } from './topology/stage-file.js';

/** A connection with no call open for this long is closed, ms. */
const IDLE_CONNECTION_MS = 60_000;

/**
 * The store's kept trees as the settings say (--tree-depth, --tree-rebuild-*), a key's
 * class from the bucket table, and builds and rebuilds paced as background repair is: to
 * --repair-bytes-per-second of data read (a build reads its range once, as a scan repair
 * did) times the governor's `share` (at least 5%, as runBackground).
 */
function keptTreesOptions(config: NodeConfig, buckets: BucketTable, share: () => number): KeptTreesOptions {
  const classes = keyClasses(buckets);
  const throttle = new Throttle(config.repairBytesPerSecond, {
    sleep: (ms) => new Promise((r) => setTimeout(r, ms).unref?.()),
  });
  return {
    depth: config.treeDepth,
    classOf: (key) => classes.nOf(key),
    rebuildIntervalMs: config.treeRebuildIntervalMs,
    rebuildJitterMs: config.treeRebuildJitterMs,
    pace: (bytes) => {
      throttle.rate = config.repairBytesPerSecond * Math.max(0.05, share());
      return throttle.take(bytes);
    },
  };
}

/** What a starting node reads from its data dir (loadDataDir), and the logger that names it. */
export interface DataDir {
  readonly identity: Identity;
  readonly known: { states: EndpointState[]; fresh: boolean };
  readonly checkpoints: Checkpoints;
  readonly buckets: BucketTable;
  readonly purged: readonly string[];
  readonly nodeLog: Logger;
  readonly stage: Stage;
}

/** What a node is built from (RingkvNode's constructor): its data dir as read, its open store, its server, and the address it advertises. */
export interface Opened extends DataDir {
  readonly config: NodeConfig;
  readonly clock: WallClock;
  readonly store: Store;
  readonly server: grpc.Server;
  readonly security: NodeSecurity;
  readonly address: string;
}

/** Read what the data dir holds for this node, saving its identity with the generation this start takes; staged changes that cannot be read are dropped with a warning. */
export async function loadDataDir(config: NodeConfig, clock: WallClock, log: Logger): Promise<DataDir> {
  // A data dir without node.json is a new node; one with it is this node restarting,
  // whatever it was doing (even joining, with no tokens yet).
  const fresh = !existsSync(join(config.dataDir, 'node.json'));
  const identity = await loadIdentity(config.dataDir, { id: config.id, clusterName: config.clusterName }, clock.now());
  await saveIdentity(config.dataDir, identity);
  const known = { states: fresh ? [] : await loadMembers(config.dataDir), fresh };
  const checkpoints = await Checkpoints.open(join(config.dataDir, 'transfers.json'));
  const buckets = await loadBuckets(config.dataDir, config.replicas);
  const purged = await loadPurged(config.dataDir);
  const nodeLog = log.child({ node: identity.id });
  const stage = await loadStage(config.dataDir).catch((e: unknown) => {
    nodeLog.warn({ component: 'topology', err: (e as Error).message }, 'staged changes not restored');
    return EMPTY_STAGE;
  });
  return { identity, known, checkpoints, buckets, purged, nodeLog, stage };
}

/** Open the store in the data dir: a key's sibling policy from its bucket, kept trees paced by `share` (--kept-trees on), the disk floor. */
export function openStore(
  config: NodeConfig,
  clock: WallClock,
  identity: Identity,
  buckets: BucketTable,
  log: Logger,
  share: () => number,
): Promise<Store> {
  return Store.open({
    path: join(config.dataDir, 'data'),
    durability: config.durability,
    tombstoneGraceMs: config.tombstoneGraceMs,
    ...(config.clockPruneGraceMs !== undefined ? { clockPruneGraceMs: config.clockPruneGraceMs } : {}),
    now: clock.now,
    logger: log.child({ component: 'storage' }),
    // A key's sibling policy is its bucket's, as this node's table has it now.
    policyOf: (key) => buckets.props(bucketOf(key))?.siblings ?? 'siblings',
    ...(config.keptTrees === 'on' ? { keptTrees: keptTreesOptions(config, buckets, share) } : {}),
    disk: { label: identity.id, ...(config.minFreeDisk !== undefined ? { floorBytes: config.minFreeDisk } : {}) },
  });
}

/** The gRPC server and what it admits, listening on --listen (`host` as given there). */
export interface Listener {
  readonly server: GuardedServer;
  readonly admission: Admission;
  readonly listening: { port: number; close: () => void };
  readonly host: string;
}

/** Make the gRPC server and listen on --listen; when that fails, close the credentials and the store and reject. */
export async function listen(config: NodeConfig, security: NodeSecurity, store: Store): Promise<Listener> {
  const admission = new Admission(
    () => ({ maxConnections: config.maxConnections, maxCallsPerConnection: config.maxCallsPerConnection }),
    (r) => security.refused(r),
  );
  const server = new GuardedServer({
    'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
    // HTTP/2's own cap on a connection's streams, a little above the call limit that
    // answers RESOURCE_EXHAUSTED: so that a raw client cannot open streams without end.
    'grpc.max_concurrent_streams': config.maxCallsPerConnection + 16,
    // A connection with no call for a minute is closed (GOAWAY): clients reconnect on
    // their next call. It also closes connections HTTP/2 gave up on after a peer's
    // protocol error, which Node otherwise leaves open (the socket and its descriptor).
    'grpc.max_connection_idle_ms': IDLE_CONNECTION_MS,
    interceptors: [admission.interceptor(), ...security.interceptors()],
  });
  const colon = config.listen.lastIndexOf(':');
  const host = config.listen.slice(0, colon);
  let listening: { port: number; close: () => void };
  try {
    listening = await listenAdmitted(
      server,
      host,
      Number(config.listen.slice(colon + 1)),
      security.serverCredentials(),
      admission,
    );
  } catch (e) {
    security.close();
    await store.close();
    throw new Error(`cannot listen on ${config.listen}: ${(e as Error).message}`, { cause: e });
  }
  return { server, admission, listening, host };
}
