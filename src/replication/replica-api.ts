/**
 * The narrow interface between a coordinator and a key's replicas (docs/architecture.md: the
 * transport knows nothing of what the messages mean). Today one unary call per request
 * (transport/replica-wire.ts); a later batching transport over long-lived streams only
 * has to implement these three calls.
 *
 * Nodes are named by id; the implementation finds their address. Every call carries an
 * absolute deadline (ms since the epoch, as Date.now()).
 */

export interface ApplyResult {
  /** The key's record after the write, to send to the other replicas. */
  readonly record: Buffer;
  /** Context covering the new version (what the client gets back). */
  readonly context: Buffer;
}

export interface ReplicaApi {
  /** Issue a new version on replica `node`: a value, or a tombstone for null. */
  apply(node: string, key: Buffer, value: Buffer | null, context: Buffer, deadline: number): Promise<ApplyResult>;
  /** Merge `record` into `node`'s versions of the key; as a hint for `hintFor` when set. */
  merge(node: string, key: Buffer, record: Buffer, hintFor: string | undefined, deadline: number): Promise<boolean>;
  /** `node`'s record of the key (its hint for `hintFor` when set), or undefined. */
  read(node: string, key: Buffer, hintFor: string | undefined, deadline: number): Promise<Buffer | undefined>;
}
