/**
 * Reclaiming a deleted bucket's keys on this node (docs/reads-and-writes.md#deleting-a-bucket).
 * When the bucket table holds a deletion this node has not purged yet, it deletes every
 * record of that bucket in its store (a scan of every range, sets' elements and maps'
 * fields included, kept trees updated as for any delete) and every hint it holds of it;
 * then it records the deletion done in `purged.json` and gossips it (field `purged`), so
 * that the node serving a `bucket delete` can tell which members are done, and a name is
 * created again only once every member purged it. A node killed mid-purge purges again
 * when it starts: the deletion is recorded only once done.
 *
 * Owns: the purge runs, `purged.json` and the `purged` gossip field. Must not: decide
 * deletions (the table and bucket-sync.ts do), or refuse what arrives of a deleted bucket
 * meanwhile (the replica side does: local-replica.ts, handoff.ts).
 */
import { bucketOf, startsWithMark, type BucketDeletion, type BucketTable } from '../buckets/index.js';
import { field, type EndpointState } from '../membership/endpoint.js';
import type { Gossiper } from '../membership/gossiper.js';
import type { Store } from '../storage/index.js';
import { readJsonFile, writeAtomically } from './identity.js';

const FILE = 'purged.json';
export const PURGED_FIELD = 'purged';
/** The whole ring: start = end. */
const EVERY_RANGE = { start: 0n, end: 0n };
/** Rounds of a deletion's scan while writes raced it (a record changed under the scan), before it waits for the next kick. */
const ROUNDS = 5;

/** A deletion's id: its bucket and its time, so that a name deleted, created and deleted again is two deletions. */
export function deletionId(d: Pick<BucketDeletion, 'name' | 'at'>): string {
  return `${d.name}@${d.at}`;
}

/** The deletions a member's gossip says it purged. */
export function purgedBy(state: EndpointState): Set<string> {
  const text = field(state, PURGED_FIELD);
  return new Set(text === undefined || text === '' ? [] : text.split(','));
}

/** Whether a stored key is of bucket `name`. */
const ofBucket = (name: string) => (key: Uint8Array) => startsWithMark(key) && bucketOf(key) === name;

/** The hints `store` holds of keys `mine` takes, with their targets. */
async function* hintsOf(
  store: Store,
  mine: (key: Uint8Array) => boolean,
): AsyncGenerator<{ target: string; key: Buffer; record: Buffer }> {
  for (const target of store.hints.targets().keys()) {
    for await (const batch of store.hints.list(target, { batchCount: 512 }))
      for (const h of batch) if (mine(h.key)) yield { target, key: h.key, record: h.record };
  }
}

/** How many records and hints of bucket `name` `store` holds, counted up to `limit`. */
export async function keysHeld(store: Store, name: string, limit: number): Promise<number> {
  const mine = ofBucket(name);
  let n = 0;
  for await (const batch of store.ranges.scan(EVERY_RANGE, { batchCount: 512 }, undefined, mine)) {
    n += batch.entries.length + batch.corrupt.length;
    if (n >= limit) return limit;
  }
  for await (const _ of hintsOf(store, mine)) if (++n >= limit) return limit;
  return n;
}

/** The deletions purged in data dir `dir` (purged.json); none when there is no file. */
export async function loadPurged(dir: string): Promise<string[]> {
  const bad = (what: string): never => {
    throw new Error(`${dir}/${FILE} is damaged (${what}): remove it; the node then purges every deleted bucket again`);
  };
  const j = (await readJsonFile(dir, FILE, bad)) as { purged?: unknown } | undefined;
  if (j === undefined) return [];
  return Array.isArray(j.purged) && j.purged.every((x) => typeof x === 'string')
    ? (j.purged as string[])
    : bad('no list of deletions');
}

export interface BucketPurgeDeps {
  readonly dataDir: string;
  readonly store: Store;
  readonly table: BucketTable;
  readonly gossiper: Gossiper;
  readonly log: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

/** Where this node's purge stands: what it purges now and how much it reclaimed, and what is done. */
export interface PurgeStatus {
  readonly current: string | undefined;
  readonly keys: number;
  readonly hints: number;
  readonly done: readonly string[];
}

export class BucketPurge {
  #run: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #current: string | undefined;
  #keys = 0;
  #hints = 0;

  readonly done: Set<string>;

  /** `done`: the deletions purged here before (loadPurged). */
  constructor(
    private readonly deps: BucketPurgeDeps,
    done: Iterable<string>,
  ) {
    this.done = new Set(done);
    this.#gossip();
  }

  get status(): PurgeStatus {
    return { current: this.#current, keys: this.#keys, hints: this.#hints, done: [...this.done].sort() };
  }

  /** Purge every deletion of the table not done here (the table changed, or the node started); resolves when none is left. */
  kick(): Promise<void> {
    if (this.#run !== undefined) {
      this.#again = true;
      return this.#run;
    }
    this.#run = (async () => {
      try {
        do {
          this.#again = false;
          await this.#purgeAll();
        } while (this.#again && !this.#stopped);
      } finally {
        this.#run = undefined;
      }
    })();
    return this.#run;
  }

  /** Stop after the batch in progress; resolves once stopped. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#run?.catch(() => undefined);
  }

  async #purgeAll(): Promise<void> {
    const deletions = this.deps.table.deletions();
    const live = new Set(deletions.map(deletionId));
    for (const d of deletions) {
      if (this.#stopped) return;
      const id = deletionId(d);
      if (this.done.has(id)) continue;
      try {
        if (!(await this.#purge(d))) continue;
      } catch (e) {
        if (!this.#stopped)
          this.deps.log.warn(
            { bucket: d.name, err: (e as Error).message },
            'purging a deleted bucket failed; trying again at the next change or start',
          );
        continue;
      }
      this.done.add(id);
      // A deletion no longer in the table (its bucket created again) is forgotten: nothing asks for it.
      for (const old of this.done) if (!live.has(old)) this.done.delete(old);
      await writeAtomically(this.deps.dataDir, FILE, `${JSON.stringify({ purged: [...this.done].sort() })}\n`);
      this.#gossip();
    }
  }

  /** Delete bucket `d`'s records and hints here; true once a scan found none left that a write raced. */
  async #purge(d: BucketDeletion): Promise<boolean> {
    const id = deletionId(d);
    const mine = ofBucket(d.name);
    this.#current = id;
    this.#keys = 0;
    this.#hints = 0;
    const started = Date.now();
    this.deps.log.info({ bucket: d.name, deletion: id }, 'purging a deleted bucket: deleting its keys and hints here');
    try {
      for (let round = 0; round < ROUNDS; round++) {
        if (this.#stopped) return false;
        const { deleted, kept } = await this.deps.store.ranges.delete(EVERY_RANGE, { batchCount: 512 }, mine);
        this.#keys += deleted;
        for await (const h of hintsOf(this.deps.store, mine))
          if (await this.deps.store.hints.remove(h.target, h.key, h.record)) this.#hints++;
        if (kept === 0) {
          this.deps.log.info(
            { bucket: d.name, deletion: id, keys: this.#keys, hints: this.#hints, ms: Date.now() - started },
            'deleted bucket purged here',
          );
          return true;
        }
      }
      this.deps.log.warn(
        { bucket: d.name, deletion: id },
        'writes kept racing the purge of a deleted bucket; trying again at the next change or start',
      );
      return false;
    } finally {
      this.#current = undefined;
    }
  }

  #gossip(): void {
    const live = new Set(this.deps.table.deletions().map(deletionId));
    this.deps.gossiper.set(
      PURGED_FIELD,
      [...this.done]
        .filter((id) => live.has(id))
        .sort()
        .join(','),
    );
  }
}
