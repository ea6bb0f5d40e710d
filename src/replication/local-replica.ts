/**
 * This node's side of the replica calls: what the Replica service runs for a peer, and
 * what a coordinator runs for itself without a network hop.
 *
 * Owns: turning a replica call into store calls. Must not: touch LevelDB directly (the
 * store does) or decide who is a replica (the coordinator does).
 */
import { BucketError } from '../buckets/index.js';
import { DecodeError, kindStep } from '../kinds/index.js';
import { KvError, showKey } from '../kinds/kv-errors.js';
import { recordDigest, type Store } from '../storage/index.js';
import {
  asReplicaFailure,
  type ReplicaApi,
  type ReplicaCall,
  type ReplicaOp,
  type ReplicaReplies,
  type ReplyTo,
} from './replica-api.js';
import { ReplicationError } from './replication-errors.js';

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

  /** Run `c` on this node's store. */
  call<C extends ReplicaCall>(c: C): Promise<ReplyTo<C>> {
    return this.#run(c) as Promise<ReplyTo<C>>;
  }

  async #run(c: ReplicaCall): Promise<ReplicaReplies[ReplicaOp]> {
    const requestId =
      'requestId' in c && c.requestId !== undefined && c.requestId.length > 0 ? { requestId: c.requestId } : {};
    switch (c.op) {
      case 'apply': {
        this.#refuseDropped(c.key);
        const o = {
          ...requestId,
          ...(c.expiresAt === undefined || c.expiresAt === 0 ? {} : { expiresAt: c.expiresAt }),
        };
        const r =
          c.value === null
            ? await this.store.delete(c.key, c.context, o)
            : await this.store.put(c.key, c.value, c.context, o);
        return { record: r.record, context: r.context };
      }
      case 'merge':
        if (this.dropped(c.key)) return false;
        if (c.hintFor !== undefined) {
          await this.store.hints.add(c.hintFor, c.key, c.record);
          return true;
        }
        return (await this.store.merge(c.key, c.record)).changed;
      case 'read':
        return c.hintFor !== undefined ? this.store.hints.get(c.hintFor, c.key) : this.store.getRecord(c.key);
      case 'digest':
        return recordDigest(await this.store.getRecord(c.key));
      case 'counterUpdate': {
        this.#refuseDropped(c.key);
        const r = await this.store.counterUpdate(c.key, c.amount, requestId);
        return { record: r.record, delta: r.delta, value: r.value };
      }
      case 'writeMany': {
        this.#refuseDropped(c.parent);
        const r = await this.store.writeMany(c.parent, c.ops, requestId);
        return r.writes.map((w) =>
          w.delta === undefined ? { key: w.key, record: w.record } : { key: w.key, record: w.record, delta: w.delta },
        );
      }
      case 'readRange': {
        const r = await this.store.readRange(c.parent, c.after, c.limit);
        return { records: r.records, next: r.next };
      }
      case 'step':
        return this.#step(c);
    }
  }

  /** A joined kind's step: found in the registry by kind and name, its argument decoded, its reply encoded. */
  async #step(c: Extract<ReplicaCall, { op: 'step' }>): Promise<Buffer> {
    const found = kindStep(c.kind, c.step);
    if (found === undefined)
      throw new ReplicationError(
        'RK_UNSUPPORTED',
        `step ${c.step} of record format ${c.kind} is unknown to this node; upgrade it to the caller's release`,
      );
    const { kind, step } = found;
    if (step.writesValue) this.#refuseDropped(c.key);
    let arg: unknown;
    try {
      arg = step.arg.decode(c.arg);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      throw new KvError('KV_BAD_OPTION', `${step.what} came with an argument that does not decode: ${e.message}`);
    }
    return step.reply.encode(await this.store.step(c.key, kind, step, arg));
  }
}

/**
 * `remote` for other nodes, and `local` directly for calls to `self`: a coordinator that
 * is a replica needs no hop to itself. Its own store's errors become ReplicaFailures, as
 * a peer's would.
 */
export function withLocal(self: string, local: LocalReplica, remote: ReplicaApi): ReplicaApi {
  return {
    call: (node, c, deadline) =>
      node === self
        ? local.call(c).catch((e: unknown) => {
            throw asReplicaFailure(e);
          })
        : remote.call(node, c, deadline),
  };
}
