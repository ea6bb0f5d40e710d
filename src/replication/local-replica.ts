/**
 * This node's side of the replica calls: what the Replica service runs for a peer, and
 * what a coordinator runs for itself without a network hop.
 *
 * Owns: turning a replica call into store calls. Must not: touch LevelDB directly (the
 * store does) or decide who is a replica (the coordinator does).
 */
import { BucketError } from '../buckets/index.js';
import { showKey } from '../storage/kv-errors.js';
import {
  recordDigest,
  type Ballot,
  type PrepareReply,
  type ProposeReply,
  type Proposal,
  type Store,
  type SubOp,
} from '../storage/index.js';
import {
  asReplicaFailure,
  type ApplyResult,
  type CounterApplied,
  type ReplicaApi,
  type SubKeyPage,
  type SubKeyRecord,
} from './replica-api.js';

export class LocalReplica {
  /**
   * `dropped`: keys of deleted buckets (unset: none). A merge or hint of one is taken and
   * not written (what a peer that has not heard of the deletion yet still sends); a write
   * of one is refused, BK_UNKNOWN, as its coordinator would refuse it had it heard.
   */
  constructor(
    private readonly store: Store,
    private readonly dropped: (key: Buffer) => boolean = () => false,
  ) {}

  #refuseDropped(key: Buffer): void {
    if (this.dropped(key))
      throw new BucketError(
        'BK_UNKNOWN',
        `the bucket of key ${showKey(key)} was deleted: this replica takes no more writes of it`,
      );
  }

  async apply(
    key: Buffer,
    value: Buffer | null,
    context: Buffer,
    requestId?: Buffer,
    expiresAt?: number,
  ): Promise<ApplyResult> {
    this.#refuseDropped(key);
    const o = {
      ...(requestId === undefined || requestId.length === 0 ? {} : { requestId }),
      ...(expiresAt === undefined || expiresAt === 0 ? {} : { expiresAt }),
    };
    const r = value === null ? await this.store.delete(key, context, o) : await this.store.put(key, value, context, o);
    return { record: r.record, context: r.context };
  }

  async merge(key: Buffer, record: Buffer, hintFor: string | undefined): Promise<boolean> {
    if (this.dropped(key)) return false;
    if (hintFor !== undefined) {
      await this.store.hints.add(hintFor, key, record);
      return true;
    }
    return (await this.store.merge(key, record)).changed;
  }

  read(key: Buffer, hintFor: string | undefined): Promise<Buffer | undefined> {
    return hintFor !== undefined ? this.store.hints.get(hintFor, key) : this.store.getRecord(key);
  }

  async digest(key: Buffer): Promise<Buffer> {
    return recordDigest(await this.store.getRecord(key));
  }

  async counterUpdate(key: Buffer, amount: number, requestId?: Buffer): Promise<CounterApplied> {
    this.#refuseDropped(key);
    const r = await this.store.counterUpdate(
      key,
      amount,
      requestId === undefined || requestId.length === 0 ? {} : { requestId },
    );
    return { record: r.record, delta: r.delta, value: r.value };
  }

  async writeMany(parent: Buffer, ops: readonly SubOp[], requestId?: Buffer): Promise<SubKeyRecord[]> {
    this.#refuseDropped(parent);
    const r = await this.store.writeMany(
      parent,
      ops,
      requestId === undefined || requestId.length === 0 ? {} : { requestId },
    );
    return r.writes.map((w) =>
      w.delta === undefined ? { key: w.key, record: w.record } : { key: w.key, record: w.record, delta: w.delta },
    );
  }

  async readRange(parent: Buffer, after: Buffer | undefined, limit: number): Promise<SubKeyPage> {
    const r = await this.store.readRange(parent, after, limit);
    return { records: r.records, next: r.next };
  }

  paxosPrepare(key: Buffer, ballot: Ballot): Promise<PrepareReply<Buffer>> {
    return this.store.paxosPrepare(key, ballot);
  }

  async paxosPropose(key: Buffer, proposal: Proposal<Buffer>): Promise<ProposeReply> {
    this.#refuseDropped(key);
    return this.store.paxosPropose(key, proposal);
  }

  async paxosCommit(key: Buffer, proposal: Proposal<Buffer>): Promise<void> {
    this.#refuseDropped(key);
    return this.store.paxosCommit(key, proposal);
  }
}

/**
 * `remote` for other nodes, and `local` directly for calls to `self`: a coordinator that
 * is a replica needs no hop to itself. Its own store's errors become ReplicaFailures, as
 * a peer's would.
 */
export function withLocal(self: string, local: LocalReplica, remote: ReplicaApi): ReplicaApi {
  const here = <T>(p: Promise<T>): Promise<T> =>
    p.catch((e: unknown) => {
      throw asReplicaFailure(e);
    });
  return {
    apply: (node, key, value, context, deadline, requestId, expiresAt) =>
      node === self
        ? here(local.apply(key, value, context, requestId, expiresAt))
        : remote.apply(node, key, value, context, deadline, requestId, expiresAt),
    merge: (node, key, record, hintFor, deadline) =>
      node === self ? here(local.merge(key, record, hintFor)) : remote.merge(node, key, record, hintFor, deadline),
    read: (node, key, hintFor, deadline) =>
      node === self ? here(local.read(key, hintFor)) : remote.read(node, key, hintFor, deadline),
    digest: (node, key, deadline) => (node === self ? here(local.digest(key)) : remote.digest(node, key, deadline)),
    counterUpdate: (node, key, amount, deadline, requestId) =>
      node === self
        ? here(local.counterUpdate(key, amount, requestId))
        : remote.counterUpdate(node, key, amount, deadline, requestId),
    writeMany: (node, parent, ops, deadline, requestId) =>
      node === self
        ? here(local.writeMany(parent, ops, requestId))
        : remote.writeMany(node, parent, ops, deadline, requestId),
    readRange: (node, parent, after, limit, deadline) =>
      node === self
        ? here(local.readRange(parent, after, limit))
        : remote.readRange(node, parent, after, limit, deadline),
    paxosPrepare: (node, key, ballot, deadline) =>
      node === self ? here(local.paxosPrepare(key, ballot)) : remote.paxosPrepare(node, key, ballot, deadline),
    paxosPropose: (node, key, proposal, deadline) =>
      node === self ? here(local.paxosPropose(key, proposal)) : remote.paxosPropose(node, key, proposal, deadline),
    paxosCommit: (node, key, proposal, deadline) =>
      node === self ? here(local.paxosCommit(key, proposal)) : remote.paxosCommit(node, key, proposal, deadline),
  };
}
