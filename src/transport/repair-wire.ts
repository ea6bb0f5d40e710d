/**
 * The Repair service (proto/ringkv/internal/v1/repair.proto) on both sides: the server
 * answers a repairer from this node's tree of a range (built once per session and kept
 * until Finish or a timeout) and its store; the client side is a peer as a RepairSide.
 *
 * Owns: the mapping, the session trees, and cutting large exchanges into messages of
 * bounded size. Must not: decide what to compare (repair/exchange.ts does).
 */
import * as grpc from '@grpc/grpc-js';
import { MAX_TOKEN, tokenHex as hex } from '../ring/index.js';
import { MAX_DEPTH, RangeTree, type KeyFilter, type Store } from '../storage/index.js';
import type { TokenRange } from '../storage/keys.js';
import { NotKept, type LeafEntry, type RecordEntry, type RepairSide } from '../repair/exchange.js';
import type { KeyHash } from './generated/ringkv/internal/v1/KeyHash.js';
import type { KeyRecord } from './generated/ringkv/internal/v1/KeyRecord.js';
import type { TreeSession, TreeSession__Output } from './generated/ringkv/internal/v1/TreeSession.js';
import { PeerChannels } from './peer-channels.js';
import { callUnary, type RequestOf, type ServiceClient, type ServiceHandlers, type UnaryMethod } from './protos.js';
import { toStatus } from './status.js';
import { peerRefusal } from './peer-refusal.js';

/** Trees a node keeps for repairers at once, and how long an idle one is kept. */
const MAX_SESSIONS = 8;
const SESSION_IDLE_MS = 5 * 60_000;
/** Keys or records per message (each record is at most the store's record cap). */
const CHUNK = 256;

const SERVICE = 'ringkv.internal.v1.Repair' as const;
type RepairClient = ServiceClient<typeof SERVICE>;

function parseToken(v: string): bigint | undefined {
  return /^[0-9a-f]{16}$/.test(v) ? BigInt(`0x${v}`) : undefined;
}

class Refusal extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export interface RepairServerDeps {
  readonly clusterName: string;
  readonly store: Store;
  now(): number;
  /** Why not to serve now (stopping), if so. */
  refuse(): string | undefined;
  /**
   * The keys a tree of N class `n` (0: every key) planned on the repairer's `classes` takes;
   * throws (BK_NOT_READY) when this node cannot tell them now. Unset: every key.
   */
  only?(n: number, classes: readonly number[]): KeyFilter;
  /** Keys of deleted buckets: a push of one is not written (the bucket's keys are being reclaimed). Unset: none. */
  dropped?(key: Buffer): boolean;
  /** A session's tree (of class `n`, 0: every key) was built here at `builtAt` (this node's clock) and the repairer finished with it. */
  finished?(range: TokenRange, n: number, builtAt: number): void;
  readonly log: { debug(o: object, m: string): void; warn(o: object, m: string): void };
}

/** A session's tree as the server keeps it: its keys' filter, when it was built and last used, and what it covers. */
interface SessionTree {
  readonly tree: Promise<RangeTree | undefined>;
  readonly only: KeyFilter | undefined;
  readonly builtAt: number;
  used: number;
  readonly range: TokenRange;
  readonly n: number;
}

/** A session's key: who asks, which session, and the tree it names. */
function sessionId(s: TreeSession__Output): string {
  return `${s.requester}/${s.session}/${s.start}-${s.end}/${s.depth}/${s.n}${s.kept ? '/kept' : ''}`;
}

/** Refuse a peer of another cluster, or any peer while this node refuses to serve (peer-refusal.ts). */
function checkPeer(deps: RepairServerDeps, cluster: string): void {
  const refused = peerRefusal(cluster, deps.clusterName, deps.refuse());
  if (refused !== undefined) throw new Refusal(refused.code, refused.details);
}

/** A repair call: its reply, or its error as a status (a Refusal's own code, anything else's from status.ts). */
function unary<Req, Res>(fn: (req: Req) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
    fn(call.request).then(
      (res) => cb(null, res),
      (e: unknown) => cb(e instanceof Refusal ? { code: e.code, details: e.message } : toStatus(e)),
    );
  };
}

/** The trees of the repair sessions this node serves, by session: built on a session's first call, kept until Finish or idle for SESSION_IDLE_MS. */
class SessionTrees {
  readonly #trees = new Map<string, SessionTree>();

  constructor(private readonly deps: RepairServerDeps) {}

  /** The session's tree; its `tree` is undefined for a kept session when this node has no kept tree of the unit at that depth. */
  open(s: TreeSession__Output | null): SessionTree {
    if (!s) throw new Refusal(grpc.status.INVALID_ARGUMENT, 'a repair request must name its session');
    checkPeer(this.deps, s.cluster);
    const start = parseToken(s.start),
      end = parseToken(s.end);
    if (start === undefined || end === undefined || start > MAX_TOKEN || end > MAX_TOKEN)
      throw new Refusal(
        grpc.status.INVALID_ARGUMENT,
        `range (${s.start}, ${s.end}] must be two tokens of 16 hex digits`,
      );
    if (!Number.isInteger(s.depth) || s.depth > MAX_DEPTH)
      throw new Refusal(grpc.status.INVALID_ARGUMENT, `tree depth must be 0 to ${MAX_DEPTH}, got ${s.depth}`);
    if (s.n > 16)
      throw new Refusal(grpc.status.INVALID_ARGUMENT, `n must be a replica count of 1-16 (0: every key), got ${s.n}`);
    const id = sessionId(s);
    const now = this.deps.now();
    for (const [k, t] of this.#trees) if (now - t.used > SESSION_IDLE_MS) this.#trees.delete(k);
    let t = this.#trees.get(id);
    if (t === undefined) {
      if (this.#trees.size >= MAX_SESSIONS)
        throw new Refusal(
          grpc.status.RESOURCE_EXHAUSTED,
          `this node is already in ${MAX_SESSIONS} repair sessions; retry later`,
        );
      t = this.#build(s, { start, end }, now);
      this.#trees.set(id, t);
      t.tree.catch(() => this.#trees.delete(id));
    }
    t.used = now;
    return t;
  }

  /** A new session's tree of `range`: the kept tree's copy, taken now (the session's snapshot; none at another depth), or one built from the store. */
  #build(s: TreeSession__Output, range: TokenRange, now: number): SessionTree {
    const { store } = this.deps;
    const only = this.deps.only?.(s.n, s.classes);
    const kept = s.kept
      ? store.trees?.depth === s.depth
        ? store.trees.tree({ n: s.n, ...range })
        : undefined
      : undefined;
    return {
      tree: s.kept ? Promise.resolve(kept) : store.ranges.tree(range, s.depth, only),
      only,
      builtAt: now,
      used: now,
      range,
      n: s.n,
    };
  }

  /** Forget the session's tree; the tree, if it had one. */
  close(s: TreeSession__Output): SessionTree | undefined {
    const id = sessionId(s);
    const t = this.#trees.get(id);
    this.#trees.delete(id);
    return t;
  }
}

/** The Repair service's handlers, over this node's session trees and store. */
export function repairService(deps: RepairServerDeps): ServiceHandlers<typeof SERVICE> {
  const trees = new SessionTrees(deps);
  return {
    TreeDigests: unary(async (r) => {
      const tree = await trees.open(r.session).tree;
      if (tree === undefined) return { digests: [], kept: false };
      if (r.level > tree.depth || r.indices.some((i) => i >= 16 ** r.level))
        throw new Refusal(
          grpc.status.INVALID_ARGUMENT,
          `level ${r.level} of a depth-${tree.depth} tree has nodes 0 to ${16 ** Math.min(r.level, tree.depth) - 1}`,
        );
      return { digests: r.indices.map((i) => tree.digest(r.level, i)), kept: r.session!.kept };
    }),
    LeafEntries: unary(async (r) => {
      const t = trees.open(r.session);
      const tree = await t.tree;
      if (tree === undefined)
        throw new Refusal(
          grpc.status.FAILED_PRECONDITION,
          'this node has no kept tree of the range: start a scan session',
        );
      if (r.leaves.some((i) => i >= tree.leaves))
        throw new Refusal(
          grpc.status.INVALID_ARGUMENT,
          `a depth-${tree.depth} tree has leaves 0 to ${tree.leaves - 1}`,
        );
      return { entries: await deps.store.ranges.leafEntries(tree, r.leaves, t.only) };
    }),
    Records: unary(async (r) => {
      checkPeer(deps, r.cluster);
      const got = await Promise.all(r.keys.map((k) => deps.store.getRecord(k)));
      return {
        records: got.flatMap((record, i): KeyRecord[] => (record === undefined ? [] : [{ key: r.keys[i]!, record }])),
      };
    }),
    Push: unary(async (r) => {
      checkPeer(deps, r.cluster);
      const records = deps.dropped === undefined ? r.records : r.records.filter((x) => !deps.dropped!(x.key));
      const results = await deps.store.mergeMany(records);
      return {
        changed: results.flatMap((m, i): KeyHash[] =>
          m.changed ? [{ key: records[i]!.key, hash: deps.store.ranges.entryHash(records[i]!.key, m.record) }] : [],
        ),
      };
    }),
    Finish: unary(async (r) => {
      const s = r.session;
      if (!s) throw new Refusal(grpc.status.INVALID_ARGUMENT, 'a repair request must name its session');
      checkPeer(deps, s.cluster);
      const t = trees.close(s);
      if (t !== undefined && r.complete) deps.finished?.(t.range, t.n, t.builtAt);
      return {};
    }),
  };
}

/** Peers as repair sides, one channel per peer. */
export class GrpcRepair {
  readonly #channels: PeerChannels<typeof SERVICE>;

  constructor(
    private readonly self: string,
    private readonly clusterName: string,
    private readonly addressOf: (id: string) => string | undefined,
    credentials: grpc.ChannelCredentials,
  ) {
    this.#channels = new PeerChannels(SERVICE, credentials);
  }

  #client(node: string): RepairClient {
    return this.#channels.forNode(node, this.addressOf);
  }

  /**
   * `node` as a side of session `session` over `range` at `depth`, of N class `cls.n` (0 or
   * unset: every key); every call has `timeoutMs`. With `kept`, from the peer's kept tree:
   * digests reject with NotKept when the peer has none (or is a release without them).
   */
  side(
    node: string,
    session: string,
    range: TokenRange,
    depth: number,
    timeoutMs: number,
    cls?: { readonly n: number; readonly classes: readonly number[] },
    kept = false,
  ): RepairSide & { finish(complete: boolean): Promise<void> } {
    const s: TreeSession = {
      cluster: this.clusterName,
      session,
      start: hex(range.start),
      end: hex(range.end),
      depth,
      requester: this.self,
      n: cls?.n ?? 0,
      classes: [...(cls?.classes ?? [])],
      kept,
    };
    const call = <M extends UnaryMethod<RepairClient>>(method: M, req: RequestOf<RepairClient, M>) =>
      callUnary(this.#client(node), method, req, { deadline: Date.now() + timeoutMs });
    const chunks = <T>(xs: readonly T[]): T[][] =>
      Array.from({ length: Math.ceil(xs.length / CHUNK) }, (_, i) => xs.slice(i * CHUNK, (i + 1) * CHUNK));
    return {
      id: node,
      digests: async (level, indices) => {
        const out: string[] = [];
        for (const part of chunks(indices)) {
          const res = await call('treeDigests', { session: s, level, indices: part });
          if (kept && !res.kept)
            throw new NotKept(`${node} has no kept tree of range ${s.start}-${s.end} at depth ${depth}`);
          out.push(...res.digests);
        }
        return out;
      },
      leafEntries: async (leaves) => {
        const out: LeafEntry[] = [];
        for (const part of chunks(leaves))
          out.push(...(await call('leafEntries', { session: s, leaves: part })).entries);
        return out;
      },
      records: async (keys) => {
        const out: RecordEntry[] = [];
        for (const part of chunks(keys))
          out.push(...(await call('records', { cluster: this.clusterName, keys: part })).records);
        return out;
      },
      push: async (records) => {
        const out: LeafEntry[] = [];
        for (const part of chunks(records))
          out.push(...(await call('push', { cluster: this.clusterName, records: part, requester: this.self })).changed);
        return out;
      },
      finish: async (complete) => {
        await call('finish', { session: s, complete });
      },
    };
  }

  retain(keep: ReadonlySet<string>): void {
    this.#channels.retain(keep);
  }

  close(): void {
    this.#channels.close();
  }
}
