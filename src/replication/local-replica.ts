/**
 * This node's side of the replica calls: what the Replica service runs for a peer, and
 * what a coordinator runs for itself without a network hop.
 *
 * Owns: turning a replica call into store calls. Must not: touch LevelDB directly (the
 * store does) or decide who is a replica (the coordinator does).
 */
import { recordDigest, type Store } from '../storage/index.js';
import { asReplicaFailure, type ApplyResult, type ReplicaApi } from './replica-api.js';

export class LocalReplica {
  constructor(private readonly store: Store) {}

  async apply(key: Buffer, value: Buffer | null, context: Buffer, requestId?: Buffer, expiresAt?: number): Promise<ApplyResult> {
    const o = {
      ...(requestId === undefined || requestId.length === 0 ? {} : { requestId }),
      ...(expiresAt === undefined || expiresAt === 0 ? {} : { expiresAt }),
    };
    const r = value === null ? await this.store.delete(key, context, o) : await this.store.put(key, value, context, o);
    return { record: r.record, context: r.context };
  }

  async merge(key: Buffer, record: Buffer, hintFor: string | undefined): Promise<boolean> {
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
      node === self ? here(local.apply(key, value, context, requestId, expiresAt)) : remote.apply(node, key, value, context, deadline, requestId, expiresAt),
    merge: (node, key, record, hintFor, deadline) => (node === self ? here(local.merge(key, record, hintFor)) : remote.merge(node, key, record, hintFor, deadline)),
    read: (node, key, hintFor, deadline) => (node === self ? here(local.read(key, hintFor)) : remote.read(node, key, hintFor, deadline)),
    digest: (node, key, deadline) => (node === self ? here(local.digest(key)) : remote.digest(node, key, deadline)),
  };
}
