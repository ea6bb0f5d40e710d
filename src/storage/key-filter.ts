/**
 * A Bloom filter of the data keys this store holds, by token: a write to a key the filter
 * has never seen skips the LevelDB read of its old record (there is none), which is half
 * the cost of a new-key put here (each LevelDB read is a trip to the thread pool).
 *
 * The one rule that keeps it safe: no false negatives. Every key that has a record must
 * have been added — by the scan at open for keys already on disk, and by the store for
 * every record it writes: after the write has landed and before the key's lock is
 * released, so that the next writer of the key sees it, and so that a write that lands
 * after a rebuild's scan took its snapshot is added to the new filter too. Until the
 * scan at open has finished the filter is not ready and answers "maybe" for everything.
 * Deleted keys are never removed (a Bloom filter cannot); they only cost a read. When the
 * keys added outgrow the filter it keeps answering correctly (more "maybe"s) while a
 * larger one is built by a new scan, then swaps in.
 *
 * Hashing: the token is already a 64-bit hash of the key (xxHash64); its halves drive
 * double hashing (Kirsch–Mitzenmacher), so a probe costs no extra hashing.
 *
 * Must not: answer "absent" for a key that might have a record.
 */

const HASHES = 7;
/** Bits per key at the designed load: with 7 hashes, about 0.06% false positives. */
export const BITS_PER_KEY = 16;
const MIN_BITS = 1 << 20;

export class KeyBits {
  readonly #words: Uint32Array;
  readonly #mask: number;
  /** Keys it was sized for; past this the false-positive rate climbs. */
  readonly capacity: number;

  constructor(expectedKeys: number) {
    let bits = MIN_BITS;
    while (bits < expectedKeys * BITS_PER_KEY && bits < 2 ** 31) bits *= 2;
    this.#words = new Uint32Array(bits / 32);
    this.#mask = bits - 1;
    this.capacity = Math.floor(bits / BITS_PER_KEY);
  }

  add(hi: number, lo: number): void {
    const step = hi | 1;
    for (let i = 0, h = lo; i < HASHES; i++, h = (h + step) >>> 0) {
      const bit = h & this.#mask;
      this.#words[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  has(hi: number, lo: number): boolean {
    const step = hi | 1;
    for (let i = 0, h = lo; i < HASHES; i++, h = (h + step) >>> 0) {
      const bit = h & this.#mask;
      if ((this.#words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }

  get bytes(): number {
    return this.#words.byteLength;
  }
}

/** Scans every data key (token halves) from a snapshot, in order. */
export type KeyScan = (add: (hi: number, lo: number) => void) => Promise<void>;

export class KeyFilter {
  #bits: KeyBits;
  /** The filter being built by a scan, which also receives every add meanwhile. */
  #next: KeyBits | undefined;
  #ready = false;
  #count = 0;
  #building: Promise<void> | undefined;

  constructor(
    private readonly scan: KeyScan,
    private readonly onError: (e: unknown) => void,
  ) {
    this.#bits = new KeyBits(0);
  }

  /**
   * Build from the keys on disk, in the background; `ready` once done. `expectedKeys`
   * sizes the filter (a low guess costs a second scan, a high one memory).
   */
  start(expectedKeys: number): Promise<void> {
    return this.#rebuild(expectedKeys * 2); // room to grow before the next rebuild
  }

  #rebuild(expected: number): Promise<void> {
    this.#building ??= this.#build(expected).then((built) => {
      this.#next = undefined;
      this.#building = undefined;
      // Sized from a guess (or the store grew during the scan): build once more, to size.
      // Not after a failed scan: a closing store fails every scan, and starting the next
      // at once looped for ever (close waits for settled()). The next add past capacity
      // tries again.
      if (built && this.#count > this.#bits.capacity) void this.#rebuild(this.#count * 2);
    });
    return this.#building;
  }

  /** Scan into a new filter; swap it in only if the scan finished (a partial one would lie). */
  async #build(expected: number): Promise<boolean> {
    const next = new KeyBits(expected);
    this.#next = next; // from now on every add also lands here
    let count = 0;
    try {
      await this.scan((hi, lo) => {
        next.add(hi, lo);
        count++;
      });
      this.#bits = next;
      this.#count = Math.max(this.#count, count);
      this.#ready = true;
      return true;
    } catch (e) {
      this.onError(e); // stay as we were: "maybe" if never ready, the old filter otherwise
      return false;
    }
  }

  /** Record that a key has a record: call once its write has landed, still holding its lock. */
  add(hi: number, lo: number, isNew: boolean): void {
    this.#bits.add(hi, lo);
    this.#next?.add(hi, lo);
    if (!isNew) return;
    this.#count++;
    if (this.#ready && this.#count > this.#bits.capacity && !this.#building) void this.#rebuild(this.#count * 2);
  }

  /** False only when the key certainly has no record. */
  mightHave(hi: number, lo: number): boolean {
    return !this.#ready || this.#bits.has(hi, lo);
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Resolves when no build is running (for tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.#building) await this.#building;
  }

  get stats(): { ready: boolean; keys: number; capacity: number; bytes: number } {
    return { ready: this.#ready, keys: this.#count, capacity: this.#bits.capacity, bytes: this.#bits.bytes };
  }
}
