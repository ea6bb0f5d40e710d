/**
 * The cluster's bucket table: every bucket with each property's last write. Every node
 * holds one; they converge by merging (gossip carries a digest, and a node whose digest
 * differs from a peer's asks for the peer's table: node/bucket-sync.ts).
 *
 * The merge is property by property, last writer wins: of two writes of one property,
 * the one with the larger (at, by, value) stays, so two nodes that merge the same
 * writes in any order hold the same table (a join-semilattice; the property test holds
 * it). A write's `at` is its node's clock, but never less than one more than the
 * property's last write on that node, so a later change on one node always wins over
 * an earlier one there. A create writes every property at one (at, by): of two creates
 * of one name at once, the later one wins whole. Two operators changing different
 * properties at once both keep theirs; changing the same one, the later wins.
 *
 * A delete writes `created` '0': the bucket is gone (no props) but its entry stays, with
 * the deletion's time and the n its keys had, so that every node reclaims those keys
 * (node/bucket-purge.ts) and a create after it (a later `created` '1', every property
 * rewritten) starts a new bucket of that name.
 *
 * Owns: the table, its merge, its digest, a bucket's effective properties, which calls
 * each bucket type takes (checkType).
 * Must not: do I/O, read a clock (`now` is passed in) or know the wire.
 */
import { createHash } from 'node:crypto';
import {
  BucketError,
  DEFAULT_BUCKET,
  MAX_BUCKETS,
  PROPERTY_NAMES,
  bucketName,
  checkProps,
  defaultProps,
  propertyText,
  storedKey,
  typeOf,
  withProperty,
  type BucketProps,
  type BucketType,
  type PropertyName,
} from './bucket.js';

/** One write of one property. */
export interface PropertyWrite {
  readonly value: string;
  readonly at: number;
  readonly by: string;
}

/** A bucket as the wire and the files carry it: each property's last write ('created' marks a named bucket's creation). */
export interface BucketEntry {
  readonly name: string;
  readonly props: Readonly<Record<string, PropertyWrite>>;
}

/** A deleted bucket: when it was deleted (the deletion's id with its name) and the n its keys had. */
export interface BucketDeletion {
  readonly name: string;
  readonly at: number;
  readonly n: number;
}

/** A bucket as shown: its effective properties and its latest change. */
export interface BucketInfo {
  readonly name: string;
  readonly props: BucketProps;
  readonly changedAt: number;
  readonly changedBy: string;
}

const CREATED = 'created';

function newer(a: PropertyWrite, b: PropertyWrite): boolean {
  return a.at !== b.at ? a.at > b.at : a.by !== b.by ? a.by > b.by : a.value > b.value;
}

export class BucketTable {
  readonly #entries = new Map<string, Map<string, PropertyWrite>>();
  #digest: string | undefined;
  #props = new Map<string, BucketProps>();
  /** nValues(), kept until the table changes: hint routing asks it per key. */
  #nValues: number[] | undefined;

  /** `clusterN`: the cluster's N (--replicas), the default bucket's n. */
  constructor(
    readonly clusterN: number,
    entries: readonly BucketEntry[] = [],
  ) {
    this.merge(entries);
  }

  /** A bucket's effective properties; undefined for a bucket this table does not have. */
  props(name: string): BucketProps | undefined {
    const cached = this.#props.get(name);
    if (cached !== undefined) return cached;
    const writes = this.#entries.get(name);
    if (name !== DEFAULT_BUCKET && writes?.get(CREATED)?.value !== '1') return undefined;
    let p = defaultProps(this.clusterN);
    for (const prop of PROPERTY_NAMES) {
      const w = writes?.get(prop);
      // The default bucket's n is the cluster's, and its type is kv: its keys predate types.
      if (w === undefined || (name === DEFAULT_BUCKET && (prop === 'n' || prop === 'type'))) continue;
      try {
        p = checkProps(withProperty(p, prop, w.value));
      } catch {
        // A write this release cannot read (a newer one's value): the property keeps its value.
      }
    }
    const fixed = { ...p, r: Math.min(p.r, p.n), w: Math.min(p.w, p.n) };
    this.#props.set(name, fixed);
    return fixed;
  }

  /**
   * The type a bucket was given that this release cannot read (a later release's), else
   * undefined. Its other properties read as usual, but its keys hold records
   * of that type: no call of this release may touch them (BK_UNKNOWN_TYPE).
   */
  unknownType(name: string): string | undefined {
    const w = name === DEFAULT_BUCKET ? undefined : this.#entries.get(name)?.get('type');
    if (w === undefined) return undefined;
    try {
      withProperty(defaultProps(this.clusterN), 'type', w.value);
      return undefined;
    } catch {
      return w.value;
    }
  }

  /**
   * Where a request's key lives: its stored key and its bucket's properties. `bucket` is
   * the request's ('' for the default bucket); BK_BAD_NAME, BK_UNKNOWN or BK_RESERVED_KEY
   * when it cannot be served, BK_EMPTY_KEY for a key of no bytes (a named bucket's stored
   * key of none, `MARK len name`, would read back as a key of the default bucket).
   */
  locate(bucket: string, key: Buffer): { key: Buffer; bucket: BucketProps } {
    const name = bucketName(bucket);
    const props = this.bucket(name);
    if (key.length === 0) throw new BucketError('BK_EMPTY_KEY', 'a key must have at least one byte');
    return { key: storedKey(name, key), bucket: props };
  }

  /** A request's bucket's properties ('' for the default bucket); BK_BAD_NAME or BK_UNKNOWN when it cannot be served. */
  bucket(bucket: string): BucketProps {
    const name = bucketName(bucket);
    const props = this.props(name);
    if (props === undefined)
      throw new BucketError(
        'BK_UNKNOWN',
        `there is no bucket ${name}: create it first (ringkv bucket create ${name}), or check its name`,
      );
    return props;
  }

  /** Every bucket, the default one first, then by name. */
  list(): BucketInfo[] {
    const names = [
      DEFAULT_BUCKET,
      ...[...this.#entries.keys()].filter((n) => n !== DEFAULT_BUCKET && this.props(n) !== undefined).sort(),
    ];
    return names.map((name) => this.info(name)!);
  }

  info(name: string): BucketInfo | undefined {
    const props = this.props(name);
    if (props === undefined) return undefined;
    let last: PropertyWrite | undefined;
    for (const w of this.#entries.get(name)?.values() ?? []) if (last === undefined || newer(w, last)) last = w;
    return { name, props, changedAt: last?.at ?? 0, changedBy: last?.by ?? '' };
  }

  /** The distinct n of every bucket (the cluster's N among them), ascending. */
  nValues(): number[] {
    this.#nValues ??= [...new Set(this.list().map((b) => b.props.n))].sort((a, b) => a - b);
    return [...this.#nValues];
  }

  /** Bucket `name`'s deletion, when it is deleted (and not created again since). */
  deletion(name: string): BucketDeletion | undefined {
    const writes = this.#entries.get(name);
    const created = writes?.get(CREATED);
    if (created?.value !== '0') return undefined;
    const n = Number(writes?.get('n')?.value);
    return { name, at: created.at, n: Number.isSafeInteger(n) && n > 0 ? n : this.clusterN };
  }

  /** Every deleted bucket, by name. */
  deletions(): BucketDeletion[] {
    return [...this.#entries.keys()].sort().flatMap((name) => this.deletion(name) ?? []);
  }

  /** Throws what would refuse a delete of bucket `name` (the default bucket, or one that does not exist). */
  checkDeletable(name: string): void {
    if (name === DEFAULT_BUCKET)
      throw new BucketError(
        'BK_BAD_NAME',
        'the default bucket cannot be deleted: delete its keys, or put new keys in a named bucket',
      );
    if (this.props(name) === undefined)
      throw new BucketError(
        'BK_UNKNOWN',
        `there is no bucket ${name}${this.deletion(name) ? ' (it was deleted)' : ''}`,
      );
  }

  /** Delete bucket `name` at `now` on node `by`: its name answers as unknown from then on. */
  delete(name: string, now: number, by: string): BucketDeletion {
    this.checkDeletable(name);
    const at = Math.max(now, this.#lastAt(name) + 1);
    const writes = new Map(this.#entries.get(name) ?? []);
    writes.set(CREATED, { value: '0', at, by });
    this.#put(name, writes);
    return this.deletion(name)!;
  }

  /** Create bucket `name` (checked) with `props` at `now` on node `by`. */
  create(name: string, props: BucketProps, now: number, by: string): BucketInfo {
    if (this.props(name) !== undefined)
      throw new BucketError('BK_EXISTS', `bucket ${name} already exists: change its properties with set`);
    if (this.list().length >= MAX_BUCKETS)
      throw new BucketError('BK_TOO_MANY', `the cluster has ${MAX_BUCKETS} buckets, the most it may have`);
    checkProps(props);
    const at = Math.max(now, this.#lastAt(name) + 1);
    const writes = new Map<string, PropertyWrite>([[CREATED, { value: '1', at, by }]]);
    for (const prop of PROPERTY_NAMES) writes.set(prop, { value: propertyText(prop, props), at, by });
    this.#put(name, writes);
    return this.info(name)!;
  }

  /** Change the properties in `changes` (name → text) of an existing bucket. n and type cannot change. */
  set(name: string, changes: Readonly<Record<string, string>>, now: number, by: string): BucketInfo {
    const current = this.props(name);
    if (current === undefined)
      throw new BucketError('BK_UNKNOWN', `there is no bucket ${name}: create it first (ringkv bucket create)`);
    let next = current;
    for (const [prop, text] of Object.entries(changes)) next = withProperty(next, prop, text);
    if (next.n !== current.n)
      throw new BucketError(
        'BK_N_FIXED',
        `the n of bucket ${name} is ${current.n} and cannot change (ringkv does not yet move keys to a new N): create a bucket with the n you want and copy the keys`,
      );
    if (typeOf(next) !== typeOf(current))
      throw new BucketError(
        'BK_TYPE_FIXED',
        `the type of bucket ${name} is ${typeOf(current)} and cannot change (its keys hold ${typeOf(current)} records): create a bucket of type ${typeOf(next)} for those keys`,
      );
    checkProps(next);
    const at = Math.max(now, this.#lastAt(name) + 1);
    const writes = new Map(this.#entries.get(name) ?? []);
    for (const prop of Object.keys(changes) as PropertyName[])
      writes.set(prop, { value: propertyText(prop, next), at, by });
    this.#put(name, writes);
    return this.info(name)!;
  }

  /** Merge another table's entries; true when this table changed. */
  merge(entries: readonly BucketEntry[]): boolean {
    let changed = false;
    for (const e of entries) {
      const mine = new Map(this.#entries.get(e.name) ?? []);
      let grew = false;
      for (const [prop, w] of Object.entries(e.props)) {
        const have = mine.get(prop);
        if (have === undefined || newer(w, have)) {
          mine.set(prop, { value: w.value, at: w.at, by: w.by });
          grew = true;
        }
      }
      if (grew) {
        this.#put(e.name, mine);
        changed = true;
      }
    }
    return changed;
  }

  /** Every entry, by name: what the wire and buckets.json carry. */
  entries(): BucketEntry[] {
    return [...this.#entries.keys()].sort().map((name) => ({
      name,
      props: Object.fromEntries([...this.#entries.get(name)!].sort(([a], [b]) => (a < b ? -1 : 1))),
    }));
  }

  /** 16 hex digits that two tables share exactly when they hold the same writes; '0' for an empty table. */
  digest(): string {
    if (this.#digest === undefined)
      this.#digest =
        this.#entries.size === 0
          ? '0'
          : createHash('sha256').update(JSON.stringify(this.entries())).digest('hex').slice(0, 16);
    return this.#digest;
  }

  #lastAt(name: string): number {
    let at = 0;
    for (const w of this.#entries.get(name)?.values() ?? []) at = Math.max(at, w.at);
    return at;
  }

  #put(name: string, writes: Map<string, PropertyWrite>): void {
    this.#entries.set(name, writes);
    this.#digest = undefined;
    this.#nValues = undefined;
    this.#props.clear();
  }
}

/** The calls each bucket type takes, as a refusal names them: the API's, then the CLI's. */
const CALLS: Readonly<Record<BucketType, string>> = {
  kv: 'Put, Get, Delete, GetMany, PutMany and Stream (ringkv put, get, del)',
  counter: 'CounterUpdate, CounterGet and CounterReset (ringkv counter incr, decr, get, reset)',
  set: 'SetUpdate, SetRead and SetContains (ringkv set add, rm, drop, list, has)',
  map: 'MapUpdate and MapRead (ringkv map set, enable, disable, incr, add, rm, drop, get)',
  consistent: 'PutIf, DeleteIf and Get (ringkv cas put, cas del, cas get)',
};

/**
 * BK_WRONG_TYPE unless bucket `name` (props `props`) is of type `want` (BK_UNKNOWN_TYPE
 * when its type is a later release's, which no call here may touch): `call` is the
 * refused operation. The message names the bucket, its type and the calls it takes, or,
 * for a typed call on a kv bucket, how to make a bucket of the type the call needs.
 */
export function checkType(
  buckets: BucketTable,
  name: string,
  props: BucketProps,
  want: BucketType | readonly BucketType[],
  call: string,
): void {
  const unknown = buckets.unknownType(name);
  if (unknown !== undefined)
    throw new BucketError(
      'BK_UNKNOWN_TYPE',
      `bucket ${name} is of type ${JSON.stringify(unknown.slice(0, 40))}, which this node's release does not know, so ${call} cannot take its keys: upgrade this node to the release that created the bucket`,
    );
  const type = typeOf(props);
  const wanted = typeof want === 'string' ? [want] : want;
  if (wanted.includes(type)) return;
  const fix =
    type === 'kv'
      ? `; ${wanted[0] === 'consistent' ? 'keys under compare-and-set' : `${wanted[0]}s`} live in a bucket of type ${wanted[0]} (ringkv bucket create NAME --type ${wanted[0]})`
      : '';
  throw new BucketError(
    'BK_WRONG_TYPE',
    `bucket ${name} is of type ${type}, which ${call} does not take: use ${CALLS[type]} on its keys${fix}`,
  );
}
