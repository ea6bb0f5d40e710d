/**
 * npm run bench:cluster — ringkv's client API on 3 real node processes on this machine
 * (N=3, R=W=2, 16-byte keys, 100-byte values) against, in the same run, a bare grpc-js
 * unary echo server and client with the same payload and concurrency: the ceiling for one
 * gRPC hop here. For 100% reads, 30% writes / 70% reads and 100% writes at 1, 16 and 128
 * requests in flight: ops/s and p50/p99/p99.9 latency (HDR histogram), and ringkv as a
 * fraction of the echo (throughput) and as a multiple of the echo's p99.
 *
 * Each echo figure is the mean of a run just before and just after the ringkv runs at
 * that concurrency, so drift on this shared machine hits both sides alike. Writes go to
 * fresh keys (a blind write to an existing key would make siblings: docs/causality.md);
 * reads go to keys loaded first at W=3.
 *
 * --tls: a second cluster of three nodes with TLS (certificates from `ringkv certs`, client
 * certificates required), started alongside; every ringkv run is made on both, one after
 * the other, and a second table gives throughput and p99 with TLS ÷ without.
 *
 *   npm run bench:cluster [-- --seconds 5] [-- --quick] [-- --tls]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as hdr from 'hdr-histogram-js';
import { Client, type ClientSecurity } from '../src/client/index.js';
import { makeCerts } from '../src/cli/dev-certs.js';
import { AdminClient } from '../src/client/admin.js';
import { freePort } from '../testkit/ports.js';
import { histogram, table } from './lib.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const TLS = args.includes('--tls');
const seconds = Number(args[args.indexOf('--seconds') + 1] ?? NaN) || (quick ? 2 : 5);
const CONCURRENCY = [1, 16, 128];
const KEYS = quick ? 5_000 : 20_000;
const MAX_OPS = 2_000_000; // a bound on every loop, whatever the speed
const VALUE = Buffer.alloc(100, 0x61);

const children: ChildProcess[] = [];
const root = mkdtempSync(join(tmpdir(), 'ringkv-bench-'));
const cleanup = (): void => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
};
process.on('exit', cleanup);
process.on('SIGINT', () => process.exit(130));

function start(cmd: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, cmd, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = l.match(ready);
      if (m) resolve({ child, match: m });
    });
    child.once('exit', (code) => reject(new Error(`${cmd.join(' ')} exited with ${code}`)));
  });
}

interface Result {
  ops: number;
  p50: number;
  p99: number;
  p999: number;
}

/** `concurrency` closed-loop workers for `seconds`; latency in µs. */
async function load(concurrency: number, op: (i: number) => Promise<unknown>): Promise<Result> {
  const h = histogram();
  let i = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end && i < MAX_OPS) {
        const s = performance.now();
        await op(i++);
        h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const r = {
    ops: h.totalCount / elapsed,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    p999: h.getValueAtPercentile(99.9) / 1000,
  };
  h.destroy();
  return r;
}

const key = (prefix: string, i: number): Buffer => Buffer.from(`${prefix}${String(i).padStart(15, '0')}`.slice(-16));

async function main(): Promise<void> {
  // The echo baseline.
  const echo = await start(
    ['--import', 'tsx', fileURLToPath(new URL('./echo-server.ts', import.meta.url))],
    /^listening (\d+)$/,
  );
  const def = protoLoader.loadSync(fileURLToPath(new URL('./echo.proto', import.meta.url)), {
    keepCase: false,
    longs: Number,
    defaults: true,
  });
  const Echo = (
    grpc.loadPackageDefinition(def) as unknown as { bench: { v1: { Echo: grpc.ServiceClientConstructor } } }
  ).bench.v1.Echo;
  const echoClient = new Echo(
    `127.0.0.1:${echo.match[1]}`,
    grpc.credentials.createInsecure(),
  ) as unknown as grpc.Client & {
    echo(req: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void): void;
  };
  const echoOp = (i: number): Promise<void> =>
    new Promise((resolve, reject) =>
      echoClient.echo({ key: key('e', i), value: VALUE }, { deadline: Date.now() + 5000 }, (e) =>
        e ? reject(e) : resolve(),
      ),
    );

  const plain = await startCluster('plain', {});
  let secure: { kv: Client } | undefined;
  if (TLS) {
    const dir = join(root, 'certs');
    await makeCerts({
      dir,
      nodes: ['t1', 't2', 't3'],
      hosts: ['127.0.0.1'],
      admins: ['admin'],
      clients: ['client'],
      days: 1,
      force: false,
    });
    const ca = join(dir, 'ca.pem');
    secure = await startCluster(
      'tls',
      { tls: { ca, cert: join(dir, 'client.pem'), key: join(dir, 'client-key.pem') } },
      (id) => [
        '--tls-cert',
        join(dir, `${id}.pem`),
        '--tls-key',
        join(dir, `${id}-key.pem`),
        '--tls-ca',
        ca,
        '--client-auth',
        'cert',
      ],
    );
  }
  const kv = plain.kv;

  console.log(
    `bench:cluster — 3 ringkv nodes (N=3, R=W=2) vs a bare grpc-js echo${TLS ? ', and 3 more with TLS' : ''}, ${seconds} s per run, 16-byte keys, 100-byte values`,
  );
  // Warm every side (JIT, channels).
  await load(16, echoOp);
  for (const s of [plain, secure]) if (s) await load(16, (i) => s.kv.get(key('r', i % KEYS), { r: 2 }));

  const workloads = (k: Client, prefix: string): Record<string, (i: number) => Promise<unknown>> => {
    let fresh = 0;
    return {
      reads: (i: number) => k.get(key('r', i % KEYS), { r: 2 }),
      '30% writes': (i: number) =>
        i % 10 < 3 ? k.put(key(prefix, fresh++), VALUE, { w: 2 }) : k.get(key('r', (i * 7919) % KEYS), { r: 2 }),
      writes: () => k.put(key(prefix, fresh++), VALUE, { w: 2 }),
    };
  };
  const ops = workloads(kv, 'w');
  const tlsOps = secure ? workloads(secure.kv, 'w') : undefined;
  const rows: string[][] = [
    [
      'workload',
      'in flight',
      'ops/s',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'echo ops/s',
      'echo p99',
      'of echo',
      'p99 × echo',
      'target',
    ],
  ];
  const tlsRows: string[][] = [
    ['workload', 'in flight', 'ops/s', 'ops/s with TLS', 'TLS ÷ plain', 'p99 ms', 'p99 with TLS', 'p99 TLS ÷ plain'],
  ];
  const ms = (x: number): string => x.toFixed(2);
  for (const c of CONCURRENCY) {
    const before = await load(c, echoOp);
    const ours: [string, Result][] = [];
    for (const [name, op] of Object.entries(ops)) {
      const r = await load(c, op);
      ours.push([name, r]);
      if (tlsOps) {
        const t = await load(c, tlsOps[name]!);
        tlsRows.push([
          name,
          String(c),
          r.ops.toFixed(0),
          t.ops.toFixed(0),
          (t.ops / r.ops).toFixed(2),
          ms(r.p99),
          ms(t.p99),
          (t.p99 / r.p99).toFixed(2),
        ]);
      }
    }
    const after = await load(c, echoOp);
    const e: Result = {
      ops: (before.ops + after.ops) / 2,
      p50: (before.p50 + after.p50) / 2,
      p99: (before.p99 + after.p99) / 2,
      p999: (before.p999 + after.p999) / 2,
    };
    rows.push(['echo (one hop)', String(c), e.ops.toFixed(0), ms(e.p50), ms(e.p99), ms(e.p999), '', '', '', '', '']);
    for (const [name, r] of ours) {
      const target =
        c !== 128 ? '' : name === 'writes' ? '≥ 0.25, p99 ≤ 4×' : name === 'reads' ? '≥ 0.30, p99 ≤ 4×' : '';
      rows.push([
        name,
        String(c),
        r.ops.toFixed(0),
        ms(r.p50),
        ms(r.p99),
        ms(r.p999),
        e.ops.toFixed(0),
        ms(e.p99),
        (r.ops / e.ops).toFixed(2),
        (r.p99 / e.p99).toFixed(1),
        target,
      ]);
    }
  }
  console.log(table(rows));
  if (secure) {
    console.log(
      '\nTLS (TLS 1.3, ECDSA P-256 certificates, client certificates required) ÷ plaintext, each ringkv run right after the other:',
    );
    console.log(table(tlsRows));
    secure.kv.close();
  }
  kv.close();
  echoClient.close();
}

/** Three ringkv nodes, as `npm start` runs them (zones a, b, c), built code; loaded with KEYS keys at W=3. */
async function startCluster(
  name: string,
  security: ClientSecurity,
  flags: (id: string) => string[] = () => [],
): Promise<{ kv: Client }> {
  const ports = await Promise.all([0, 1, 2].map(() => freePort()));
  const addrs = ports.map((p) => `127.0.0.1:${p}`);
  const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
  const prefix = name === 'tls' ? 't' : 'n';
  for (const [i, a] of addrs.entries()) {
    const id = `${prefix}${i + 1}`;
    const args = [
      main,
      'node',
      '--id',
      id,
      '--listen',
      a,
      '--data-dir',
      join(root, id),
      '--seeds',
      addrs.join(','),
      '--zone',
      'abc'[i]!,
      '--log-level',
      'warn',
      ...flags(id),
    ];
    children.push(spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] }));
  }
  const admin = addrs.map((a) => new AdminClient(a, 1000, security));
  const formStart = Date.now();
  for (;;) {
    const views = await Promise.all(admin.map((a) => a.status().catch(() => undefined)));
    if (views.every((v) => v?.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up))) break;
    if (Date.now() - formStart > 90_000) throw new Error(`the ${name} cluster did not form in 90 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
  for (const a of admin) a.close();
  const kv = new Client({ nodes: addrs, ...security });
  process.stdout.write(`${name} cluster: loading ${KEYS} keys at W=3 ... `);
  let loaded = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (loaded < KEYS) await kv.put(key('r', loaded++), VALUE, { w: 3 });
    }),
  );
  console.log('done');
  return { kv };
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
