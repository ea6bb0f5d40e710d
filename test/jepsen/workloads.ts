/**
 * The workloads: clients doing what ringkv's users do, recording every operation.
 * - set: add unique elements to a few shared keys by read-modify-write with the causal
 *   context; the value is the set as a JSON array, and siblings are merged by union.
 * - register: many keys written with unique values, half blind, half with the context of a
 *   read (which supersedes exactly what that read saw).
 * - expiry: keys written with short TTLs (blind, or over a read's context), and read back
 *   all the while; every read is recorded with the values it showed (checkers.ts
 *   checkExpiry judges them against each value's expiry plus the clock skew bound).
 * - counter: increments of a few counters (a counter bucket), each retried with its
 *   request id until acknowledged (at most three attempts), and reads of them; every read
 *   and the final values are judged by checkCounter.
 * - orset: unique elements added to a few sets (a set bucket), and some of them removed
 *   with the context of a read that showed them; judged by checkOrSet.
 * - map: updates of a few maps (a map bucket), each of three fields at once (a counter
 *   incremented, a unique element added to a set field, a register assigned that
 *   element), retried with its request id as a counter's are; judged by checkMap.
 * - cas: a few keys of a consistent bucket, each step three clients at once on one key
 *   (contention): compare-and-set writes of unique values on the version a client last
 *   saw (or "if absent"), conditional deletes, and linearizable reads; every operation
 *   with its invocation and completion goes to a history that linearizability.ts searches.
 * A failed or timed-out write is an unknown outcome, never a failure of the store; a
 * compare-and-set is a definite failure only when the node said it did not apply.
 */
import * as grpc from '@grpc/grpc-js';
import { casNotApplied, type Client } from '../../src/client/index.js';
import { randomBytes } from 'node:crypto';
import type { HistoryOp, RegisterValue } from './linearizability.js';
import type {
  CounterIncrement,
  CounterRead,
  ExpiryRead,
  ExpiryWrite,
  MapFinal,
  MapRequest,
  Op,
  OrSetElement,
  Outcome,
  RegisterWrite,
} from './checkers.js';

const W = 2,
  R = 2;

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'number' ? (grpc.status[code] ?? String(code)) : 'ERROR';
}

/** A key's value as the set workload writes it: a JSON array of element numbers. */
export function parseSet(value: Buffer): number[] {
  const parsed: unknown = JSON.parse(value.toString('utf8'));
  if (!Array.isArray(parsed) || !parsed.every((x) => Number.isSafeInteger(x)))
    throw new Error(`not a set: ${value.toString('utf8').slice(0, 80)}`);
  return parsed as number[];
}

export class History {
  readonly ops: Op[] = [];
  readonly t0 = performance.now();
  /** Reads that returned a value no writer could have written (would be a corruption). */
  readonly malformed: string[] = [];
  /** The first few error messages of each gRPC code, for the report. */
  readonly errors: Record<string, string[]> = {};

  now(): number {
    return performance.now() - this.t0;
  }

  record(workload: Op['workload'], startMs: number, outcome: Outcome, error?: unknown): void {
    const code = error === undefined ? undefined : codeOf(error);
    if (code !== undefined) {
      const seen = (this.errors[code] ??= []);
      const message = (error as Error).message ?? String(error);
      if (seen.length < 5 && !seen.includes(message)) seen.push(message);
    }
    this.ops.push({ workload, startMs, endMs: this.now(), outcome, ...(code ? { code } : {}) });
  }
}

export class SetWorkload {
  /** element → key it was added to (only elements whose put was sent). */
  readonly attempted = new Map<string, string>();
  readonly acked = new Set<string>();
  readonly keys = new Set<string>();
  #next = 0;

  constructor(
    readonly client: Client,
    readonly history: History,
    /** Keys written at once, and elements per key before the workload moves to fresh keys (bounds a value's size). */
    readonly activeKeys = 4,
    readonly perKey = 300,
  ) {}

  keyOf(e: number): string {
    const group = Math.floor(e / (this.perKey * this.activeKeys));
    return `set:${group * this.activeKeys + (e % this.activeKeys)}`;
  }

  async step(): Promise<void> {
    const e = this.#next++;
    const key = this.keyOf(e);
    this.keys.add(key);
    const start = this.history.now();
    let read;
    try {
      read = await this.client.get(key, { r: R });
    } catch (err) {
      return this.history.record('set', start, 'fail', err);
    }
    const union = new Set<number>();
    for (const v of read.values) {
      try {
        for (const x of parseSet(v)) union.add(x);
      } catch (err) {
        this.history.malformed.push(`${key}: ${(err as Error).message}`);
      }
    }
    union.add(e);
    this.attempted.set(String(e), key);
    try {
      await this.client.put(key, JSON.stringify([...union].sort((a, b) => a - b)), { context: read.context, w: W });
      this.acked.add(String(e));
      this.history.record('set', start, 'ok');
    } catch (err) {
      this.history.record('set', start, 'unknown', err);
    }
  }

  /** Each key's elements: the union of its siblings, read at R=all. */
  async finalRead(readAll: (key: string) => Promise<Buffer[]>): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    for (const key of this.keys) {
      const elements = new Set<string>();
      for (const v of await readAll(key)) {
        try {
          for (const x of parseSet(v)) elements.add(String(x));
        } catch (err) {
          this.history.malformed.push(`${key}: ${(err as Error).message}`);
        }
      }
      out.set(key, elements);
    }
    return out;
  }
}

/** What the register and expiry workloads share: a client, the history, and random keys among `keyCount`. */
abstract class KeysWorkload {
  readonly keys = new Set<string>();
  protected next = 0;

  constructor(
    readonly client: Client,
    readonly history: History,
    readonly keyCount: number,
    readonly random: () => number = Math.random,
  ) {}

  protected randomKey(prefix: string): string {
    return `${prefix}:${Math.floor(this.random() * this.keyCount)}`;
  }
}

export class RegisterWorkload extends KeysWorkload {
  readonly writes = new Map<string, RegisterWrite & { acked: boolean }>();

  async step(): Promise<void> {
    const n = this.next++;
    const key = this.randomKey('reg');
    const value = `w${n}`;
    this.keys.add(key);
    const start = this.history.now();
    let context: Buffer | undefined;
    let observed: string[] = [];
    if (this.random() < 0.5) {
      try {
        const read = await this.client.get(key, { r: R });
        context = read.context;
        observed = read.values.map(String);
      } catch (err) {
        return this.history.record('register', start, 'fail', err);
      }
    }
    const write = { key, acked: false, observed };
    this.writes.set(value, write);
    try {
      await this.client.put(key, value, { w: W, ...(context ? { context } : {}) });
      write.acked = true;
      this.history.record('register', start, 'ok');
    } catch (err) {
      this.history.record('register', start, 'unknown', err);
    }
  }

  async finalRead(readAll: (key: string) => Promise<Buffer[]>): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const key of this.keys) out.set(key, (await readAll(key)).map(String));
    return out;
  }
}

/** TTLs the expiry workload writes with, ms: short, so that values expire while the run goes on. */
export const EXPIRY_TTLS_MS = [300, 800, 2000] as const;

/** Give it a client that does not hedge: a hedge delayed in the network could take its expiry after the call returned. */
export class ExpiryWorkload extends KeysWorkload {
  /** value → its write (values are unique). */
  readonly writes = new Map<string, ExpiryWrite>();
  readonly reads: ExpiryRead[] = [];

  async step(): Promise<void> {
    const key = this.randomKey('exp');
    // Two reads to a write: a value is looked at again and again around its expiry.
    if (this.keys.has(key) && this.random() < 2 / 3) return this.#read(key);
    this.keys.add(key);
    const value = `e${this.next++}`;
    const ttlMs = EXPIRY_TTLS_MS[Math.floor(this.random() * EXPIRY_TTLS_MS.length)]!;
    const start = this.history.now();
    let context: Buffer | undefined;
    if (this.random() < 0.5) {
      try {
        context = (await this.client.get(key, { r: R })).context;
      } catch (err) {
        return this.history.record('expiry', start, 'fail', err);
      }
    }
    const write: ExpiryWrite = { key, ttlMs, startMs: start, endMs: Infinity, acked: false };
    this.writes.set(value, write);
    try {
      await this.client.put(key, value, { w: W, ttlMs, ...(context ? { context } : {}) });
      write.acked = true;
      this.history.record('expiry', start, 'ok');
    } catch (err) {
      this.history.record('expiry', start, 'unknown', err);
    } finally {
      write.endMs = this.history.now();
    }
  }

  async #read(key: string): Promise<void> {
    const start = this.history.now();
    try {
      const r = await this.client.get(key, { r: R });
      this.reads.push({ key, values: r.values.map(String), startMs: start, endMs: this.history.now() });
      this.history.record('expiry', start, 'ok');
    } catch (err) {
      this.history.record('expiry', start, 'fail', err);
    }
  }

  /** Every key read once more after the heal and the repair, recorded as reads. */
  async finalRead(readAll: (key: string) => Promise<Buffer[]>): Promise<void> {
    for (const key of this.keys) {
      const start = this.history.now();
      const values = (await readAll(key)).map(String);
      this.reads.push({ key, values, startMs: start, endMs: this.history.now() });
    }
  }
}

/** The typed workloads' buckets: created by the run before any client starts. */
export const COUNTER_BUCKET = 'jepsen-counters';
export const ORSET_BUCKET = 'jepsen-sets';
export const MAP_BUCKET = 'jepsen-maps';
export const CAS_BUCKET = 'jepsen-cas';

export class CounterWorkload extends KeysWorkload {
  readonly increments: CounterIncrement[] = [];
  readonly reads: CounterRead[] = [];

  async step(): Promise<void> {
    const key = this.randomKey('ctr');
    this.keys.add(key);
    const start = this.history.now();
    if (this.random() < 0.25) {
      try {
        const { value } = await this.client.counterGet(key, { bucket: COUNTER_BUCKET, r: R });
        this.reads.push({ key, value, startMs: start, endMs: this.history.now() });
        this.history.record('counter', start, 'ok');
      } catch (err) {
        this.history.record('counter', start, 'fail', err);
      }
      return;
    }
    const inc: CounterIncrement = {
      key,
      amount: 1 + Math.floor(this.random() * 5),
      startMs: start,
      endMs: start,
      outcome: 'unknown',
    };
    this.increments.push(inc);
    // One request id for every attempt: a retry after a timeout must not count twice.
    const requestId = randomBytes(16);
    let last: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.client.counterUpdate(key, inc.amount, { bucket: COUNTER_BUCKET, requestId, w: W });
        inc.outcome = 'ok';
        break;
      } catch (err) {
        last = err;
      }
    }
    inc.endMs = this.history.now();
    this.history.record('counter', start, inc.outcome, inc.outcome === 'ok' ? undefined : last);
  }

  async finalRead(read: (key: string) => Promise<bigint>): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    for (const key of this.keys) out.set(key, await read(key));
    return out;
  }
}

export class OrSetWorkload extends KeysWorkload {
  /** element → its key and outcomes (elements are unique). */
  readonly elements = new Map<string, OrSetElement>();
  /** Acknowledged adds no remove was tried on yet: what a remove picks from. */
  readonly #removable: string[] = [];

  async step(): Promise<void> {
    const start = this.history.now();
    if (this.#removable.length > 0 && this.random() < 0.3) {
      const element = this.#removable.splice(Math.floor(this.random() * this.#removable.length), 1)[0]!;
      const el = this.elements.get(element)!;
      let seen;
      try {
        seen = await this.client.setContains(el.key, element, { bucket: ORSET_BUCKET, r: R });
      } catch (err) {
        this.#removable.push(element);
        return this.history.record('orset', start, 'fail', err);
      }
      // Not seen: a quorum read can miss an add a sloppy quorum took; try it again later.
      if (!seen.present) return void this.#removable.push(element);
      el.remove = 'unknown';
      try {
        await this.client.setRemove(el.key, [{ element, context: seen.context }], { bucket: ORSET_BUCKET, w: W });
        el.remove = 'ok';
        this.history.record('orset', start, 'ok');
      } catch (err) {
        this.history.record('orset', start, 'unknown', err);
      }
      return;
    }
    const key = this.randomKey('orset');
    this.keys.add(key);
    const element = String(this.next++);
    const el: OrSetElement = { key, add: 'unknown', remove: undefined };
    this.elements.set(element, el);
    try {
      await this.client.setAdd(key, [element], { bucket: ORSET_BUCKET, w: W });
      el.add = 'ok';
      this.#removable.push(element);
      this.history.record('orset', start, 'ok');
    } catch (err) {
      this.history.record('orset', start, 'unknown', err);
    }
  }

  async finalRead(read: (key: string) => Promise<string[]>): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    for (const key of this.keys) out.set(key, new Set(await read(key)));
    return out;
  }
}

export class MapWorkload extends KeysWorkload {
  readonly requests: MapRequest[] = [];

  async step(): Promise<void> {
    const key = this.randomKey('map');
    this.keys.add(key);
    const start = this.history.now();
    const element = String(this.next++);
    const request: MapRequest = { key, amount: 1 + Math.floor(this.random() * 5), element, outcome: 'unknown' };
    this.requests.push(request);
    const ops = [
      { op: 'increment' as const, path: [{ name: 'n', type: 'counter' as const }], amount: request.amount },
      { op: 'add' as const, path: [{ name: 's', type: 'set' as const }], element },
      { op: 'assign' as const, path: [{ name: 'last', type: 'register' as const }], value: element },
    ];
    // One request id for every attempt: a retry must apply once, all three ops or none.
    const requestId = randomBytes(16);
    let last: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.client.mapUpdate(key, ops, { bucket: MAP_BUCKET, requestId, w: W });
        request.outcome = 'ok';
        break;
      } catch (err) {
        last = err;
      }
    }
    this.history.record('map', start, request.outcome, request.outcome === 'ok' ? undefined : last);
  }

  async finalRead(read: (key: string) => Promise<MapFinal>): Promise<Map<string, MapFinal>> {
    const out = new Map<string, MapFinal>();
    for (const key of this.keys) out.set(key, await read(key));
    return out;
  }
}

/** Clients of the cas workload on one key at once, each step. */
const CAS_CLIENTS = 3;

export class CasWorkload extends KeysWorkload {
  /** Every operation on the keys, for the linearizability checker (reads and writes whose outcome is unknown included). */
  readonly ops: HistoryOp[] = [];
  /** Operations refused before they could apply (the node said so): left out of the history. */
  notApplied = 0;
  /** Per key, the value and context a client last saw: what the next write expects. */
  readonly #seen = new Map<string, { value: RegisterValue; context: Buffer }>();

  async step(): Promise<void> {
    const key = this.randomKey('cas');
    this.keys.add(key);
    await Promise.all(Array.from({ length: CAS_CLIENTS }, () => this.#one(key)));
  }

  async #one(key: string): Promise<void> {
    const start = this.history.now();
    const seen = this.#seen.get(key) ?? { value: null, context: Buffer.alloc(0) };
    const roll = this.random();
    const id = `c${this.next++}`;
    if (roll < 0.3) {
      try {
        const r = await this.client.get(key, { bucket: CAS_BUCKET });
        const value = r.values[0] === undefined ? null : String(r.values[0]);
        this.#seen.set(key, { value, context: r.context });
        this.ops.push({
          key,
          startMs: start,
          endMs: this.history.now(),
          outcome: 'ok',
          op: { kind: 'read', value },
          id,
        });
        this.history.record('cas', start, 'ok');
      } catch (err) {
        this.history.record('cas', start, 'fail', err);
      }
      return;
    }
    // A delete only of a value (a delete of a deletion would make two absent versions, which a register of values cannot tell apart).
    const del = roll < 0.4 && seen.value !== null;
    // Now and then "if absent" (an empty context), whatever was seen; else on the version seen.
    // A deletion seen is written on as "if absent": the checker's register holds values, and
    // two deletions are both null to it, so "not applied on deletion A, the key being at
    // deletion B" would look like a violation (what it tests is the same: absent or not).
    const ifAbsent = !del && (roll > 0.9 || seen.value === null);
    const expect = ifAbsent ? null : seen.value;
    const context = ifAbsent ? Buffer.alloc(0) : seen.context;
    const value = del ? null : id;
    try {
      const r = del
        ? await this.client.deleteIf(key, context, { bucket: CAS_BUCKET })
        : await this.client.putIf(key, id, { bucket: CAS_BUCKET, context });
      const current = r.applied ? value : r.found ? String(r.value) : null;
      this.#seen.set(key, { value: current, context: r.context });
      this.ops.push({
        key,
        startMs: start,
        endMs: this.history.now(),
        outcome: 'ok',
        op: { kind: 'cas', expect, value, applied: r.applied, ...(r.applied ? {} : { current }) },
        id,
      });
      this.history.record('cas', start, 'ok');
    } catch (err) {
      if (casNotApplied(err)) {
        this.notApplied++;
        return this.history.record('cas', start, 'fail', err);
      }
      this.ops.push({
        key,
        startMs: start,
        endMs: this.history.now(),
        outcome: 'unknown',
        op: { kind: 'cas', expect, value },
        id,
      });
      this.history.record('cas', start, 'unknown', err);
    }
  }

  /** Each key's value read after the run (an operation of the history too). */
  async finalRead(read: (key: string) => Promise<{ values: Buffer[] }>): Promise<void> {
    for (const key of this.keys) {
      const start = this.history.now();
      const r = await read(key);
      this.ops.push({
        key,
        startMs: start,
        endMs: this.history.now(),
        outcome: 'ok',
        op: { kind: 'read', value: r.values[0] === undefined ? null : String(r.values[0]) },
        id: `final:${key}`,
      });
    }
  }
}
