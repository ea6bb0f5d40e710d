/**
 * Who issues this node's dots. A dot must never be issued twice (docs/causality.md).
 * Each store has a random 8-byte id, kept in its metadata, and issues dots as actor
 * (store id, epoch), 16 bytes. A record remembers the epoch it was first written under
 * here (its owner epoch) and keeps using it while the key lives here. Whenever the node
 * drops records (tombstone purge, range delete, a corrupt record set aside) it first
 * moves to a new epoch (`retire`), so a key dropped and written again later gets a new
 * actor and never reuses a dot that other replicas may still hold.
 *
 * Epochs are leased in blocks, written with fsync before use. After an unclean shutdown
 * every earlier epoch is retired (the floor): a power cut may have lost writes whose
 * dots other replicas already hold, and the record on disk would hand them out again.
 * And the store takes a new random id: the lease itself may be what was lost (the newest
 * log cut short rolls the metadata back to an earlier lease, whose epochs the lost run
 * used), and no epoch of a new id was ever issued. A database repaired after damage
 * (`lostWrites`) takes a new id too. With a data directory, the evidence of a clean
 * shutdown is a file in the database's directory, removed at open before anything is
 * written (the store removes it before a repair too): a cut log can bring back an
 * earlier clean mark in the database, never that file.
 *
 * Owns: the store id, the epoch lease, the floor, the clean-shutdown mark.
 * Must not: touch data keys.
 */
import { open as openFile, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Engine, WriteOp } from './engine.js';
import { KvError } from '../kinds/kv-errors.js';
import { metaKey } from './keys.js';
import type { Actor } from '../kinds/dots.js';

const LEASE = 4096;

function u64(n: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeUInt32BE(Math.floor(n / 0x100000000), 0);
  b.writeUInt32BE(n >>> 0, 4);
  return b;
}

/** Metadata that does not decode leaves the store unable to promise fresh dots: refuse to open. */
function corrupt(name: string, b: Buffer): never {
  throw new KvError(
    'KV_CORRUPT_RECORD',
    `store metadata '${name}' is corrupt (${b.length} bytes: ${b.toString('hex').slice(0, 32)}); without it the store cannot be sure never to reuse a version's dot. ` +
      `Restore the data directory from a backup, or start this node with a new, empty data directory and let repair refill it`,
  );
}

function readU64(name: string, b: Buffer | undefined): number | undefined {
  if (b === undefined) return undefined;
  if (b.length !== 8) corrupt(name, b);
  const n = b.readUInt32BE(0) * 0x100000000 + b.readUInt32BE(4);
  if (!Number.isSafeInteger(n)) corrupt(name, b);
  return n;
}

/** The evidence of a clean shutdown kept outside the database (a file), when there is a data directory. */
export interface CleanMark {
  /** Whether the mark is there. */
  present(): Promise<boolean>;
  /** Remove it, durably. */
  clear(): Promise<void>;
  /** Put it there, durably. */
  set(): Promise<void>;
}

/** Open `path` with `flags` (a directory: 'r'), fsync it and close it. */
async function fsynced(path: string, flags: string): Promise<void> {
  const fd = await openFile(path, flags);
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

/** A clean mark as the file `path` (its directory must exist), each change fsynced with its directory. */
export function fileCleanMark(path: string): CleanMark {
  return {
    present: () =>
      readFile(path).then(
        () => true,
        () => false,
      ),
    clear: async () => {
      await rm(path, { force: true });
      await fsynced(dirname(path), 'r');
    },
    set: async () => {
      await fsynced(path, 'w');
      await fsynced(dirname(path), 'r');
    },
  };
}

export class Actors {
  /** The epoch keys new to this node are written under. */
  #current: number;
  #next: number;
  #leaseEnd: number;
  #extending: Promise<void> | undefined;
  #lastEpoch = -1;
  #lastActor = '';

  private constructor(
    private readonly engine: Engine,
    private readonly mark: CleanMark | undefined,
    /** The store id as 8 latin1 characters: the prefix of every actor. */
    private readonly storeId: string,
    /** Owner epochs below this are retired (issued before an unclean shutdown, or retireAll): never reused. */
    public floor: number,
    next: number,
  ) {
    this.#current = next;
    this.#next = next + 1;
    this.#leaseEnd = next + LEASE;
  }

  /**
   * Load or create the store id, lease a block of epochs and clear the clean mark (set
   * again by `markClean` at close). `uncleanShutdown` is true when the store existed and
   * was not closed cleanly; then, or with `lostWrites` (a database repaired after damage),
   * the store takes a new id.
   */
  static async open(
    engine: Engine,
    randomBytes: (n: number) => Buffer,
    o: { mark?: CleanMark; lostWrites?: boolean } = {},
  ): Promise<{ actors: Actors; uncleanShutdown: boolean }> {
    const [id, lease, clean, floor] = await engine.getMany(
      ['store-id', 'epoch-lease', 'clean', 'epoch-floor'].map(metaKey),
    );
    const ops: WriteOp[] = [];
    if (id !== undefined && id.length !== 8) corrupt('store-id', id);
    const marked = clean !== undefined && (o.mark === undefined || (await o.mark.present()));
    await o.mark?.clear(); // first: a crash from here on is an unclean shutdown, whatever the database says
    const uncleanShutdown = id !== undefined && !marked;
    const storeId = id === undefined || uncleanShutdown || o.lostWrites === true ? randomBytes(8) : id;
    if (storeId !== id) ops.push({ type: 'put', key: metaKey('store-id'), value: storeId });
    const next = readU64('epoch-lease', lease) ?? 1;
    const actors = new Actors(
      engine,
      o.mark,
      storeId.toString('latin1'),
      uncleanShutdown ? next : (readU64('epoch-floor', floor) ?? 0),
      next,
    );
    ops.push(
      { type: 'put', key: metaKey('epoch-lease'), value: u64(actors.#leaseEnd) },
      { type: 'put', key: metaKey('epoch-floor'), value: u64(actors.floor) },
      { type: 'del', key: metaKey('clean') },
    );
    await engine.write(ops, true);
    return { actors, uncleanShutdown };
  }

  /** The store id, hex. */
  get id(): string {
    return Buffer.from(this.storeId, 'latin1').toString('hex');
  }

  /** The epoch to write a key under, given the owner epoch its record holds (if any). */
  epochFor(ownerEpoch: number | undefined): number {
    return ownerEpoch !== undefined && ownerEpoch >= this.floor ? ownerEpoch : this.#current;
  }

  actor(epoch: number): Actor {
    if (epoch !== this.#lastEpoch) {
      this.#lastEpoch = epoch;
      this.#lastActor = this.storeId + u64(epoch).toString('latin1');
    }
    return this.#lastActor;
  }

  /**
   * Retire every epoch issued so far, not only for keys new here: what the store does when
   * a record may have been rolled back to an older version (a damaged key hid the newest),
   * whose owner epoch would otherwise issue again a counter the lost version used. Keys
   * written afterwards go under a fresh epoch, as after an unclean shutdown.
   */
  async retireAll(): Promise<void> {
    await this.retire();
    const floor = this.#current;
    await this.engine.write([{ type: 'put', key: metaKey('epoch-floor'), value: u64(floor) }], true);
    this.floor = floor;
  }

  /** Move keys new to this node to a fresh epoch: call before records are dropped. */
  async retire(): Promise<void> {
    while (this.#next >= this.#leaseEnd) {
      this.#extending ??= this.#extend().finally(() => (this.#extending = undefined));
      await this.#extending;
    }
    this.#current = this.#next++;
  }

  async #extend(): Promise<void> {
    const end = this.#leaseEnd + LEASE;
    await this.engine.write([{ type: 'put', key: metaKey('epoch-lease'), value: u64(end) }], true);
    this.#leaseEnd = end;
  }

  /** Mark a clean shutdown: the next open keeps the id and the epochs. */
  async markClean(): Promise<void> {
    await this.engine.write([{ type: 'put', key: metaKey('clean'), value: Buffer.alloc(0) }], true);
    await this.mark?.set();
  }
}
