/**
 * This node's side of the bucket table (buckets/table.ts): kept in `buckets.json` in the
 * data dir (written atomically, as node.json), so a restarted node has every bucket it
 * knew before it hears a peer; its digest gossiped, and the tables of peers that differ
 * fetched and merged (BucketSync).
 *
 * Owns: the file, the node's table, its gossip and its sync. Must not: decide how tables
 * merge (the table does).
 */
import { join } from 'node:path';
import {
  BucketError,
  BucketTable,
  bucketName,
  type BucketDeletion,
  type BucketEntry,
  type BucketInfo,
  type BucketProps,
} from '../buckets/index.js';
import { field } from '../membership/endpoint.js';
import type { Gossiper } from '../membership/gossiper.js';
import { readJsonFile, writeAtomically } from './identity.js';
import { deletionId, purgedBy } from './bucket-purge.js';

const FILE = 'buckets.json';

/** The table saved in `dir` (empty when there is none); throws with what is wrong when the file is damaged. */
export async function loadBuckets(dir: string, clusterN: number): Promise<BucketTable> {
  const bad = (what: string): never => {
    throw new Error(
      `${join(dir, FILE)} is damaged (${what}): move it aside and restart; the node gets the bucket table from its peers`,
    );
  };
  const j = (await readJsonFile(dir, FILE, bad)) as { buckets?: unknown } | undefined;
  if (j === undefined) return new BucketTable(clusterN);
  if (!Array.isArray(j?.buckets)) return bad('no buckets');
  const entries = (j.buckets as unknown[]).filter((e): e is BucketEntry => {
    const x = e as BucketEntry;
    return (
      typeof x?.name === 'string' &&
      typeof x.props === 'object' &&
      x.props !== null &&
      Object.values(x.props).every(
        (w) => typeof w?.value === 'string' && typeof w.at === 'number' && typeof w.by === 'string',
      )
    );
  });
  return new BucketTable(clusterN, entries);
}

/** Save `table` to `dir`. */
export async function saveBuckets(dir: string, table: BucketTable): Promise<void> {
  await writeAtomically(dir, FILE, `${JSON.stringify({ buckets: table.entries() }, null, 1)}\n`);
}

export interface BucketSyncDeps {
  readonly id: string;
  readonly dataDir: string;
  readonly table: BucketTable;
  readonly gossiper: Gossiper;
  /** The wall clock (a change's time). */
  now(): number;
  /** A peer's table (Control Buckets). */
  fetch(peer: string): Promise<BucketEntry[]>;
  /** How many records and hints of bucket `name` member `node` holds (this node's own too), counted up to a few (Control BucketKeys). */
  keysHeld(node: string, name: string): Promise<number>;
  /** The table changed (here or by a merge), after it was saved: deleted buckets are purged. */
  changed(): void;
  /** Members removed (removenode, replace): a dead one still gossips its last status, so gossip alone would count it. */
  removed(): ReadonlySet<string>;
  readonly log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

/** A change made here, and the up members that did not have it when the call returned. */
export interface BucketChange {
  readonly bucket: BucketInfo;
  readonly lagging: string[];
}

/** A deleted bucket's purge across the members: who has deleted its keys, and who has not yet. */
export interface DeletionStatus {
  readonly deletion: BucketDeletion;
  readonly purged: string[];
  readonly pending: string[];
}

/** How long a create or set waits for every up member to have it, ms. */
const AGREE_MS = 5000;
const AGREE_POLL_MS = 100;

/**
 * The bucket table kept the same on every node: the table's digest is gossiped (field
 * `buckets`); each gossip round, a node whose digest differs from an up peer's asks that
 * peer for its table and merges it (the merge is commutative, so any order converges).
 * A change is made on one node, saved, and reaches the others the same way; the call
 * that made it waits (a few seconds at most) until every up member gossips the new
 * digest, as Cassandra's schema changes wait for schema agreement.
 */
export class BucketSync {
  /** Peers being asked now: one call per peer at a time. */
  readonly #asking = new Set<string>();
  /** Saves in order: a later save never lands before an earlier one. */
  #saving: Promise<void> = Promise.resolve();

  constructor(private readonly deps: BucketSyncDeps) {
    deps.gossiper.set('buckets', deps.table.digest());
  }

  get table(): BucketTable {
    return this.deps.table;
  }

  /** Up members (this one apart) that do not gossip this node's digest. */
  differing(): string[] {
    const mine = this.deps.table.digest();
    const out: string[] = [];
    for (const s of this.deps.gossiper.states()) {
      if (s.id === this.deps.id || !this.deps.gossiper.isUp(s.id)) continue;
      const theirs = field(s, 'buckets');
      if (theirs !== undefined && theirs !== mine) out.push(s.id);
    }
    return out;
  }

  /** One gossip round's part: ask up to two differing peers for their tables. */
  round(): void {
    for (const peer of this.differing()
      .filter((p) => !this.#asking.has(p))
      .slice(0, 2)) {
      this.#asking.add(peer);
      this.deps
        .fetch(peer)
        .then((entries) => this.merge(entries, peer))
        .catch((e: unknown) =>
          this.deps.log.warn(
            { peer, err: (e as Error).message },
            "could not fetch a peer's bucket table; asking again next round",
          ),
        )
        .finally(() => this.#asking.delete(peer));
    }
  }

  /** Merge a peer's table; saved and gossiped when it changed this one. */
  async merge(entries: readonly BucketEntry[], from: string): Promise<void> {
    if (!this.deps.table.merge(entries)) return;
    this.deps.log.info({ peer: from, buckets: this.deps.table.digest() }, 'bucket table merged from a peer');
    await this.#changed();
  }

  /**
   * Refuse (BK_N_ABOVE_MEMBERS) an n the cluster cannot place: more replicas than it has
   * members (down ones counted, those that left or were removed not), so that every key
   * would have fewer replicas than its bucket says.
   */
  checkN(n: number): void {
    const members = this.#members().length;
    if (n > members)
      throw new BucketError(
        'BK_N_ABOVE_MEMBERS',
        `n ${n} is more replicas than the cluster's ${members} member${members === 1 ? '' : 's'}: each key would have only ${members}; create the bucket with n ${members} or less, or add nodes first (n cannot change later)`,
      );
  }

  /**
   * Create a bucket here (BK_* errors as the table throws them; BK_NOT_READY while a member
   * runs a release without buckets; BK_DELETING while a member still holds keys of a
   * deleted bucket of that name, which the new bucket would otherwise show).
   */
  async create(name: string, props: BucketProps): Promise<BucketChange> {
    const b = bucketName(name);
    const status = this.deletionStatus(b);
    if (status !== undefined && status.pending.length > 0)
      throw new BucketError(
        'BK_DELETING',
        `bucket ${b} was deleted and ${status.pending.join(', ')} ${status.pending.length === 1 ? 'has' : 'have'} not yet deleted its keys: its name can be used again once every member has (ringkv bucket delete ${b} shows how far it is; a member that is down purges when it is back, or remove it with ringkv removenode)`,
      );
    return this.#change(() => this.deps.table.create(b, props, this.deps.now(), this.deps.id));
  }

  /**
   * Delete bucket `name`: refused (BK_NOT_EMPTY) unless `purge` while a member holds a
   * record or hint of it, or cannot be asked. Its keys are then purged on every member.
   */
  async delete(name: string, purge: boolean): Promise<DeletionStatus> {
    const b = bucketName(name);
    this.deps.table.checkDeletable(b);
    if (!purge) {
      const members = this.#members();
      const held = await Promise.allSettled(members.map((m) => this.deps.keysHeld(m, b)));
      const holding = members.flatMap((m, i) =>
        held[i]!.status === 'fulfilled' && (held[i] as PromiseFulfilledResult<number>).value > 0 ? [m] : [],
      );
      const unknown = members.filter((_, i) => held[i]!.status === 'rejected');
      if (holding.length > 0)
        throw new BucketError(
          'BK_NOT_EMPTY',
          `bucket ${b} holds keys (on ${holding.join(', ')}): delete them first, or delete the bucket with --purge to delete them on every member`,
        );
      if (unknown.length > 0)
        throw new BucketError(
          'BK_NOT_EMPTY',
          `cannot tell whether bucket ${b} is empty: ${unknown.join(', ')} did not answer; delete with --purge to delete its keys wherever they are, or retry when ${unknown.length === 1 ? 'it is' : 'they are'} up`,
        );
    }
    await this.#change(() => {
      this.deps.table.delete(b, this.deps.now(), this.deps.id);
      return undefined;
    });
    return this.deletionStatus(b)!;
  }

  /** Where the purge of deleted bucket `name` stands; undefined when it is not deleted. */
  deletionStatus(name: string): DeletionStatus | undefined {
    const deletion = this.deps.table.deletion(name);
    if (deletion === undefined) return undefined;
    const id = deletionId(deletion);
    const purged: string[] = [],
      pending: string[] = [];
    for (const m of this.#members()) {
      const s = this.deps.gossiper.state(m);
      (s !== undefined && purgedBy(s).has(id) ? purged : pending).push(m);
    }
    return { deletion, purged, pending };
  }

  /** The cluster's members, this node among them: every node gossip knows that did not leave and was not removed. */
  #members(): string[] {
    const removed = this.deps.removed();
    return [...this.deps.gossiper.states()]
      .filter((s) => field(s, 'status') !== 'left' && field(s, 'status') !== 'removed' && !removed.has(s.id))
      .map((s) => s.id)
      .sort();
  }

  /** Change properties of a bucket here. */
  set(name: string, changes: Readonly<Record<string, string>>): Promise<BucketChange> {
    return this.#change(() => this.deps.table.set(bucketName(name), changes, this.deps.now(), this.deps.id));
  }

  /** A change made here: refused while a member cannot take it; saved, gossiped, then waited on until every up member has it. */
  async #change<T>(make: () => T): Promise<{ bucket: T; lagging: string[] }> {
    this.#checkMembers();
    const bucket = make();
    await this.#changed();
    return { bucket, lagging: await this.#agree() };
  }

  #checkMembers(): void {
    const old = [...this.deps.gossiper.states()]
      .filter((s) => s.id !== this.deps.id && field(s, 'status') !== 'left' && field(s, 'buckets') === undefined)
      .map((s) => s.id);
    if (old.length > 0)
      throw new BucketError(
        'BK_NOT_READY',
        `member(s) ${old.join(', ')} run a release without buckets: upgrade every node before creating or changing buckets`,
      );
  }

  async #changed(): Promise<void> {
    this.deps.gossiper.set('buckets', this.deps.table.digest());
    const table = this.deps.table;
    // After the save before it, whether that one failed or not: a failed save must not stop the later ones.
    const save = this.#saving.catch(() => undefined).then(() => saveBuckets(this.deps.dataDir, table));
    this.#saving = save;
    await save;
    this.deps.changed();
  }

  /** Wait until no up member differs, AGREE_MS at most; the members still differing then. */
  async #agree(): Promise<string[]> {
    const until = performance.now() + AGREE_MS;
    for (;;) {
      const lagging = this.differing();
      if (lagging.length === 0 || performance.now() >= until) return lagging;
      await new Promise((r) => setTimeout(r, AGREE_POLL_MS));
    }
  }
}
