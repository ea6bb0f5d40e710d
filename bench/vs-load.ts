/**
 * One load-generator process of bench/vs.ts (it starts --clients of them): the same
 * closed loop for ringkv, etcd and the bare echo, so the three differ only in the system
 * on the other end. Commands arrive as JSON lines on stdin, each answered by one JSON line
 * on stdout with the same id; the process lives for the whole bench so its channels and
 * JIT stay warm across runs.
 *
 *   {id, cmd: 'init', index, echo, etcd: [host:port], ringkv: [host:port]}
 *   {id, cmd: 'preload', system, prefix, from, to, concurrency, w, keep}  → {ms, failed, errors}
 *   {id, cmd: 'run', system, workload, concurrency, seconds, from, to}    → {ops, failed, errors, elapsedMs, cpuMs, hist, siblings}
 *   {id, cmd: 'exit'}                                                     (exits 0, so --cpu-prof writes)
 *
 * `hist` is the HDR histogram of successful requests' latency in µs, compressed base64;
 * failed requests are counted by message, not recorded. Keys are 16 bytes, values 100.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as hdr from 'hdr-histogram-js';
import { Client } from '../src/client/index.js';
import { histogram } from './lib.js';

export type System = 'echo' | 'etcd' | 'ringkv';
export type Workload = 'put new' | 'overwrite' | 'get';

export interface Init {
  cmd: 'init';
  index: number;
  echo: string;
  etcd: string[];
  /** The bucket of ringkv's requests ('' for the default bucket). */
  bucket: string;
  ringkv: string[];
}
export interface Preload {
  cmd: 'preload';
  system: 'etcd' | 'ringkv';
  prefix: string;
  from: number;
  to: number;
  concurrency: number;
  /** ringkv's W. */
  w: number;
  /** Keep each key's context for overwrites (ringkv; the bench's own keys, not the bulk ones). */
  keep: boolean;
  /** Random values (bulkValue) instead of VALUE. */
  random: boolean;
}
export interface Run {
  cmd: 'run';
  system: System;
  workload: Workload;
  concurrency: number;
  seconds: number;
  /** This process's share of the preloaded keys: key('k', i) for from ≤ i < to. */
  from: number;
  to: number;
}
export type Command = ({ id: number } & (Init | Preload | Run)) | { id: number; cmd: 'exit' };

export interface PreloadReply {
  ms: number;
  failed: number;
  errors: Record<string, number>;
}
export interface RunReply {
  ops: number;
  failed: number;
  errors: Record<string, number>;
  elapsedMs: number;
  /** CPU this process used in the run (user + system, all threads), ms. */
  cpuMs: number;
  hist: string;
  /** ringkv gets that answered more than one value (an overwrite that did not replace). */
  siblings: number;
}

/** Every bench value: 100 bytes (as in the other benches; LevelDB's Snappy shrinks it on disk, etcd's bbolt does not). */
export const VALUE = Buffer.alloc(100, 0x61);
/** A bulk key's value (--preload): 100 random bytes, so its disk and memory figures are not flattered by compression. */
export const bulkValue = (): Buffer => randomBytes(100);
/** A bound on every loop, whatever the speed. */
const MAX_OPS = 5_000_000;
const DEADLINE_MS = 5000;

/** Key i under a prefix, zero-padded to exactly 16 bytes. */
export function key(prefix: string, i: number): Buffer {
  const s = prefix + String(i).padStart(16 - prefix.length, '0');
  if (s.length !== 16) throw new Error(`key ${s} is not 16 bytes`);
  return Buffer.from(s);
}

export { histogram };

type Unary = (req: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, res?: unknown) => void) => void;
type Stub = grpc.Client & Record<string, Unary>;

function stubs(protoFile: string, service: string, addresses: readonly string[]): Stub[] {
  const def = protoLoader.loadSync(fileURLToPath(new URL(protoFile, import.meta.url)), {
    keepCase: false,
    longs: String,
    defaults: true,
  });
  let ctor: unknown = grpc.loadPackageDefinition(def);
  for (const part of service.split('.')) ctor = (ctor as Record<string, unknown>)[part];
  return addresses.map(
    (a) => new (ctor as grpc.ServiceClientConstructor)(a, grpc.credentials.createInsecure()) as unknown as Stub,
  );
}

function call(stub: Stub, method: string, req: unknown): Promise<unknown> {
  return new Promise((resolve, reject) =>
    stub[method]!.call(stub, req, { deadline: Date.now() + DEADLINE_MS }, (e, res) => (e ? reject(e) : resolve(res))),
  );
}

/** A stride coprime with n: walks every key of the share once per n requests, not in key order. */
function stride(n: number): number {
  for (const p of [7919, 7927, 7933, 7937]) if (n % p !== 0) return p % Math.max(n, 1) || 1;
  return 1;
}

function errorName(e: unknown): string {
  const g = e as Partial<grpc.ServiceError>;
  if (typeof g.code === 'number') return `${grpc.status[g.code] ?? g.code}: ${(g.details ?? '').slice(0, 80)}`;
  return String((e as Error)?.message ?? e).slice(0, 80);
}

let index = 0;
let echo: Stub | undefined;
let etcd: Stub[] = [];
let ringkv: Client | undefined;
/** The bucket ringkv's requests go to (init). */
let bucket = '';
let nextEtcd = 0;
/** Never-written keys for `put new`: this process's prefix, a counter for its whole life. */
let fresh = 0;
/** ringkv: the latest context of each of this process's preloaded keys, by i − from. */
let contexts: (Buffer | undefined)[] = [];
let contextBase = 0;

const etcdStub = (): Stub => etcd[nextEtcd++ % etcd.length]!;

/** (Re)connect: again after the driver restarted the ringkv nodes; contexts and counters stay. */
function init(c: Init): void {
  echo?.close();
  for (const s of etcd) s.close();
  ringkv?.close();
  index = c.index;
  echo = stubs('./echo.proto', 'bench.v1.Echo', [c.echo])[0];
  etcd = c.etcd.length > 0 ? stubs('./etcd-kv.proto', 'etcdserverpb.KV', c.etcd) : [];
  ringkv = new Client({ nodes: c.ringkv, deadlineMs: DEADLINE_MS });
  bucket = c.bucket;
}

async function preload(c: Preload): Promise<PreloadReply> {
  const t0 = performance.now();
  const keep = c.keep && c.system === 'ringkv';
  if (keep) {
    contexts = new Array<Buffer | undefined>(c.to - c.from);
    contextBase = c.from;
  }
  let next = c.from,
    failed = 0;
  const errors: Record<string, number> = {};
  await Promise.all(
    Array.from({ length: c.concurrency }, async () => {
      while (next < c.to) {
        const i = next++;
        const k = key(c.prefix, i);
        const value = c.random ? bulkValue() : VALUE;
        // A key that failed is retried: every key must be there before the runs read it.
        for (let attempt = 0; ; attempt++) {
          try {
            if (c.system === 'ringkv') {
              const { context } = await ringkv!.put(k, value, { w: c.w, bucket });
              if (keep) contexts[i - c.from] = context;
            } else await call(etcdStub(), 'Put', { key: k, value });
            break;
          } catch (e) {
            failed++;
            errors[errorName(e)] = (errors[errorName(e)] ?? 0) + 1;
            if (attempt >= 20)
              throw new Error(`preload of ${k.toString()} on ${c.system} failed 20 times: ${errorName(e)}`);
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
    }),
  );
  return { ms: performance.now() - t0, failed, errors };
}

async function run(c: Run): Promise<RunReply> {
  const n = c.to - c.from;
  const step = stride(n);
  const busy = new Uint8Array(n);
  let cursor = 0,
    siblings = 0;
  // Overwrites: a key is never written by two workers at once, so each put carries the
  // context of the key's previous write and replaces it (no siblings).
  const pick = (): number => {
    for (;;) {
      const k = (cursor++ * step) % n;
      if (busy[k] === 0) return ((busy[k] = 1), k);
    }
  };
  const pfx = `n${index.toString(36).padStart(2, '0')}`;
  let op: () => Promise<void>;
  if (c.system === 'echo') {
    op = () => call(echo!, 'Echo', { key: key(pfx, fresh++), value: VALUE }).then(() => undefined);
  } else if (c.system === 'etcd') {
    if (c.workload === 'put new')
      op = () => call(etcdStub(), 'Put', { key: key(pfx, fresh++), value: VALUE }).then(() => undefined);
    else if (c.workload === 'overwrite')
      op = () =>
        call(etcdStub(), 'Put', { key: key('k', c.from + ((cursor++ * step) % n)), value: VALUE }).then(
          () => undefined,
        );
    else
      op = async () => {
        const res = (await call(etcdStub(), 'Range', {
          key: key('k', c.from + ((cursor++ * step) % n)),
          serializable: true,
        })) as { kvs: unknown[] };
        if (res.kvs.length === 0) throw new Error('not found');
      };
  } else {
    const kv = ringkv!;
    if (c.workload === 'put new') op = () => kv.put(key(pfx, fresh++), VALUE, { w: 2, bucket }).then(() => undefined);
    else if (c.workload === 'overwrite')
      op = async () => {
        const k = pick();
        const i = c.from + k;
        try {
          const { context } = await kv.put(key('k', i), VALUE, { w: 2, bucket, context: contexts[i - contextBase] });
          contexts[i - contextBase] = context;
        } finally {
          busy[k] = 0;
        }
      };
    else
      op = async () => {
        const res = await kv.get(key('k', c.from + ((cursor++ * step) % n)), { r: 2, bucket });
        if (!res.found) throw new Error('not found');
        if (res.values.length > 1) siblings++;
      };
  }

  const h = histogram();
  const errors: Record<string, number> = {};
  let started = 0,
    failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + c.seconds * 1000;
  await Promise.all(
    Array.from({ length: c.concurrency }, async () => {
      while (performance.now() < end && started < MAX_OPS) {
        started++;
        const s = performance.now();
        try {
          await op();
          h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
        } catch (e) {
          failed++;
          errors[errorName(e)] = (errors[errorName(e)] ?? 0) + 1;
        }
      }
    }),
  );
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const reply = {
    ops: h.totalCount,
    failed,
    errors,
    elapsedMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    hist: hdr.encodeIntoCompressedBase64(h),
    siblings,
  };
  h.destroy();
  return reply;
}

function send(x: unknown): void {
  process.stdout.write(`${JSON.stringify(x)}\n`);
}

function exit(): void {
  echo?.close();
  for (const s of etcd) s.close();
  ringkv?.close();
  process.exit(0);
}

// One command at a time: the driver waits for each answer. Only when run as the process
// (vs.ts imports the types and helpers above).
let queue = Promise.resolve();
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  createInterface({ input: process.stdin })
    .on('line', (line) => {
      const c = JSON.parse(line) as Command;
      queue = queue.then(async () => {
        try {
          if (c.cmd === 'init') (init(c), send({ id: c.id, ok: true }));
          else if (c.cmd === 'preload') send({ id: c.id, ...(await preload(c)) });
          else if (c.cmd === 'run') send({ id: c.id, ...(await run(c)) });
          else exit();
        } catch (e) {
          send({ id: c.id, error: String((e as Error)?.stack ?? e) });
        }
      });
    })
    // The driver gone: nothing more to do.
    .on('close', () => void queue.then(exit));
  send({ ready: true });
}
