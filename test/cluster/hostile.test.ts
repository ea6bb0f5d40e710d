/**
 * Hostile transport input against a real `ringkv node` on 127.0.0.1 (issue 16), with small
 * limits (--max-connections 64, --max-calls-per-connection 32) so that floods are cheap:
 * raw TCP and HTTP/2 garbage, malformed gRPC, oversized messages, a connection flood, a
 * reader that never reads, and unary Puts that stall one byte short. After (or during)
 * each attack a victim client's puts and gets must succeed, the node must still run, and
 * its memory (VmRSS / VmHWM from /proc) and open file descriptors (/proc/<pid>/fd) must
 * stay within the bounds each case states.
 *
 * The attacks are testkit/hostile/attacks.ts; the figures of each case (RSS before / peak /
 * after, fds before / peak / after) are printed at the end. Linux only (/proc). About a
 * minute. Connections HTTP/2 gives up on after a protocol error are closed once idle
 * (a minute on a node): test/unit/transport/admission.test.ts proves that with a short idle
 * time; `npm run bench:hostile` runs every attack at full size.
 */
import { constants as h2 } from 'node:http2';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import * as A from '../../testkit/hostile/attacks.js';
import { fdCount, memOf, resetPeak } from '../../testkit/hostile/proc.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';

const MiB = 1 << 20;
const mib = (n: number): number => Math.round(n / MiB);

const mem = (pid: number): { rss: number; hwm: number } => memOf(pid) ?? { rss: NaN, hwm: NaN };
const fds = fdCount;

interface Row {
  readonly name: string;
  readonly rssBefore: number;
  peak: number;
  rssAfter: number;
  readonly fdsBefore: number;
  fdsPeak: number;
  fdsAfter: number;
  note: string;
}

/** A few puts and gets by a new client on keys of its own; throws if one fails. */
async function victim(address: string, tag: string): Promise<void> {
  const client = new Client({ nodes: [address], deadlineMs: 5000 });
  try {
    for (let i = 0; i < 3; i++) {
      const key = `victim-${tag}-${Date.now()}-${i}`;
      await client.put(key, `value ${i}`);
      expect((await client.get(key)).values.map(String), `victim get of ${key} after ${tag}`).toEqual([`value ${i}`]);
    }
  } finally {
    client.close();
  }
}

/** One unary Put on a brand-new TCP connection (a new Client could share grpc-js's subchannel): its outcome in one line, "OK" when it worked. */
async function freshPut(address: string, key: string): Promise<string> {
  const conn = await A.h2connect(address, {}, 3000);
  try {
    const body = A.grpcMessage(A.putRequest(Buffer.from(key), Buffer.from('fresh')));
    return A.describeCall(
      await A.grpcCall(conn, {
        path: '/ringkv.v1.KeyValue/Put',
        headers: { 'grpc-timeout': '3S' },
        timeoutMs: 3000,
        send: async (w) => w.end(body),
      }),
    );
  } finally {
    await conn.close();
  }
}

/**
 * A client that opens KeyValue/Stream with a receive window of 0 and sends `gets` Gets of
 * `key` (100 per message), then holds the stream unread for `holdMs`. It gives up early
 * (cancels the stream) once the node's RSS passes `giveUpAt`, so that a node that buffers
 * every reply fails the test without taking the machine's memory with it.
 */
async function slowReader(
  address: string,
  key: Buffer,
  o: { gets: number; holdMs: number; pid: number; giveUpAt: number },
): Promise<string> {
  const started = Date.now();
  const conn = await A.h2connect(address, { settings: { initialWindowSize: 0 } });
  let sent = 0;
  let gaveUp = false;
  const over = (): boolean => (gaveUp ||= mem(o.pid).rss > o.giveUpAt);
  try {
    const r = await A.grpcCall(conn, {
      path: '/ringkv.v1.KeyValue/Stream',
      noRead: true,
      timeoutMs: o.holdMs + 5000,
      send: async (w) => {
        // Not waiting on flow control: a node that stops reading holds the rest here, and the RSS is still watched.
        while (sent < o.gets && !w.over && !over()) {
          void w.write(A.grpcMessage(A.kvGetCalls(key, sent + 1, 100, 60_000)));
          sent += 100;
          await A.sleep(10);
        }
        while (!w.over && !over() && Date.now() - started < o.holdMs) await A.sleep(50);
        if (!w.over) w.stream.close(h2.NGHTTP2_CANCEL);
      },
    });
    const end =
      r.grpcStatus !== undefined
        ? `stream ended ${A.describeCall(r)}`
        : gaveUp
          ? 'gave up: node RSS over the bound'
          : 'held open unread';
    return `${sent} Gets written; ${end}`;
  } finally {
    await conn.close();
  }
}

describe('a node under hostile transport input', () => {
  let cluster: TestCluster;
  let node: NodeProcess;
  const rows: Row[] = [];
  const address = (): string => node.address;

  async function ready(): Promise<void> {
    await waitFor(
      'the node normal and up',
      60_000,
      async () => {
        const v = await node.status();
        return v !== undefined && v.members.length === 1 && v.members.every((m) => m.status === 'normal' && m.up);
      },
      200,
    );
  }

  /** Run `attack` with the node's RSS and fds sampled every 50 ms and VmHWM reset first; its row goes in the figures. */
  async function watched<T>(name: string, attack: (row: Row) => Promise<T>): Promise<{ value: T; row: Row }> {
    const pid = node.pid;
    const row: Row = {
      name,
      rssBefore: mem(pid).rss,
      peak: 0,
      rssAfter: NaN,
      fdsBefore: fds(pid),
      fdsPeak: 0,
      fdsAfter: NaN,
      note: '',
    };
    rows.push(row);
    const hwmOk = resetPeak(pid);
    const sample = (): void => {
      row.peak = Math.max(row.peak, mem(pid).rss || 0);
      row.fdsPeak = Math.max(row.fdsPeak, fds(pid) || 0);
    };
    const timer = setInterval(sample, 50);
    try {
      const value = await attack(row);
      return { value, row };
    } finally {
      clearInterval(timer);
      sample();
      if (hwmOk) row.peak = Math.max(row.peak, mem(pid).hwm || 0);
      settled(row);
    }
  }

  function settled(row: Row): void {
    row.rssAfter = mem(node.pid).rss;
    row.fdsAfter = fds(node.pid);
  }

  /** Wait until the node holds at most `slack` descriptors more than before the attack. */
  async function fdsBack(row: Row, timeoutMs: number, slack = 8): Promise<void> {
    try {
      await waitFor(
        `the node's fds back to ${row.fdsBefore} + ${slack}`,
        timeoutMs,
        () => fds(node.pid) <= row.fdsBefore + slack || undefined,
        250,
      );
    } finally {
      settled(row);
    }
  }

  beforeAll(async () => {
    cluster = await TestCluster.create(1, 1, [
      '--replicas',
      '1',
      '--max-connections',
      '64',
      '--max-calls-per-connection',
      '32',
    ]);
    node = cluster.nodes[0]!;
    node.start();
    await ready();
  }, 90_000);

  // Each case starts from a running node of moderate size: one that an earlier case killed or bloated is replaced.
  beforeEach(async () => {
    if (node.running && mem(node.pid).rss < 400 * MiB) return;
    if (node.running) {
      node.signal('SIGKILL');
      await node.exit;
    }
    node.start();
    await ready();
  }, 90_000);

  afterAll(() => {
    cluster?.destroy();
    const line = (r: Row): string =>
      `${r.name.padEnd(34)} RSS MiB ${mib(r.rssBefore)} / ${mib(r.peak)} / ${mib(r.rssAfter)}   fds ${r.fdsBefore} / ${r.fdsPeak} / ${r.fdsAfter}${r.note ? `   ${r.note}` : ''}`;
    console.log(`node figures, before / peak / after:\n${rows.map(line).join('\n')}`);
  });

  it('keeps serving a client through raw garbage, HTTP/1.1, bad prefaces, invalid frames, CONTINUATION and control-frame floods, and rapid reset', async () => {
    const a = address();
    const attacks: [string, () => Promise<unknown>][] = [
      ['TCP garbage and HTTP/1.1', () => A.tcpGarbage(a, { timeoutMs: 3000 })],
      ['bad HTTP/2 preface', () => A.badPreface(a, { timeoutMs: 2000 })],
      ['preface then garbage', () => A.prefaceThenGarbage(a)],
      ['invalid frames', () => A.invalidFrames(a, { lingerMs: 400 })],
      [
        'CONTINUATION flood',
        async () => [
          await A.continuationFlood(a, { frames: 100_000, frameBytes: 0 }),
          await A.continuationFlood(a, { frames: 10_000, frameBytes: 1000 }),
        ],
      ],
      ['PING flood, answers unread', () => A.controlFlood(a, { kind: 'ping', count: 50_000, pauseReading: true })],
      ['SETTINGS flood', () => A.controlFlood(a, { kind: 'settings', count: 50_000 })],
      ['empty DATA flood', () => A.controlFlood(a, { kind: 'empty-data', count: 50_000 })],
      ['WINDOW_UPDATE flood', () => A.controlFlood(a, { kind: 'window-update', count: 50_000 })],
      ['rapid reset', () => A.rapidReset(a, { streams: 10_000 })],
    ];
    for (const [name, attack] of attacks) {
      const { row } = await watched(name, attack);
      expect(node.running, `the node exited during "${name}": ${node.stderr.slice(-500)}`).toBe(true);
      await victim(a, name.replace(/\W+/g, '-'));
      expect(
        row.peak - row.rssBefore,
        `"${name}": the node's RSS grew by ${mib(row.peak - row.rssBefore)} MiB`,
      ).toBeLessThan(256 * MiB);
      // Bounded, not back to baseline: connections the node answered with GOAWAY may linger (the last case's subject).
      await fdsBack(row, 5000, 16);
    }
  }, 120_000);

  it('answers malformed gRPC with a status: 4 GiB prefix and gzip bomb RESOURCE_EXHAUSTED, garbage body INVALID_ARGUMENT, unknown method UNIMPLEMENTED', async () => {
    const { value: out, row } = await watched('gRPC-level malformed', () =>
      A.grpcMalformed(address(), { timeoutMs: 5000, bombBytes: 64 * MiB, metadataBytes: 64 * 1024 }),
    );
    const answer = (prefix: string): string =>
      out.find((o) => o.attack.startsWith(prefix))?.result ?? `no case "${prefix}"`;
    expect(answer('grpc: prefix claims 4 GiB')).toMatch(/^RESOURCE_EXHAUSTED/);
    expect(answer('grpc: gzip bomb')).toMatch(/^RESOURCE_EXHAUSTED/);
    expect(answer('grpc: garbage protobuf body')).toMatch(/^INVALID_ARGUMENT: \S/);
    expect(answer('grpc: unknown method')).toMatch(/^UNIMPLEMENTED/);
    expect(node.running).toBe(true);
    expect(row.peak - row.rssBefore, 'RSS growth while a 64 MiB gzip bomb was sent').toBeLessThan(128 * MiB);
    await victim(address(), 'malformed');
  }, 60_000);

  it('refuses five 100 MiB Puts, one after the other, each RESOURCE_EXHAUSTED, its peak memory growing by less than 64 MiB', async () => {
    const { value: r, row } = await watched('5 × 100 MiB Put, sequential', () =>
      A.oversizedPuts(address(), { count: 5, bytes: 100 * MiB, parallel: 1, timeoutMs: 20_000 }),
    );
    row.note = r.result;
    expect(Object.values(r.outcomes ?? {}).reduce((x, y) => x + y, 0)).toBe(5);
    for (const outcome of Object.keys(r.outcomes ?? {})) expect(outcome).toMatch(/^RESOURCE_EXHAUSTED/);
    expect(row.peak - row.rssBefore, `VmHWM ${mib(row.peak)} MiB, ${mib(row.rssBefore)} MiB before`).toBeLessThan(
      64 * MiB,
    );
    await victim(address(), 'oversized');
  }, 90_000);

  it('under a flood of 200 idle connections (limit 64) still serves a new connection within 15 s, and its fds return once the flood ends', async () => {
    let servedAfterMs = -1;
    const tried: string[] = [];
    const { value: flood, row } = await watched('200 idle TCP connections', () =>
      A.connectionFlood(address(), {
        tcp: 200,
        h2: 0,
        // Held at least 2 s, and for as long as the victim tries: a brand-new connection's Put every half second until one is served.
        holdMs: 2000,
        maxMs: 40_000,
        whileHeld: async () => {
          const began = Date.now();
          for (let i = 0; servedAfterMs < 0 && Date.now() - began < 15_000; i++) {
            const outcome = await freshPut(address(), `flood-victim-${Date.now()}-${i}`);
            tried.push(A.shape(outcome));
            if (outcome === 'OK') servedAfterMs = Date.now() - began;
            else await A.sleep(500);
          }
        },
      }),
    );
    row.note = `victim served after ${servedAfterMs} ms; before that: ${A.summarize(A.tally(tried.filter((t) => t !== 'OK')))}`;
    expect(flood.notes?.['tcpOpen'], flood.result).toBeGreaterThan(64);
    expect(
      servedAfterMs,
      `no new connection served within 15 s: ${A.summarize(A.tally(tried))}`,
    ).toBeGreaterThanOrEqual(0);
    // Turned away meanwhile, a new connection is told why and when to come back.
    for (const t of tried.filter((x) => x !== 'OK')) expect(t).toMatch(/^RESOURCE_EXHAUSTED.*grpc-retry-pushback-ms/);
    await victim(address(), 'flood');
    await fdsBack(row, 15_000);
  }, 90_000);

  it('with a Stream of 1000 Gets of a 1 MiB value that is never read, stays under 400 MiB more memory and serves others', async () => {
    const key = Buffer.from(`slow-reader-${Date.now()}`);
    const seed = new Client({ nodes: [address()] });
    try {
      await seed.put(key, Buffer.alloc(MiB, 0x73));
    } finally {
      seed.close();
    }
    const bound = mem(node.pid).rss + 400 * MiB;
    const { value: result, row } = await watched('slow reader, 1000 × 1 MiB unread', () =>
      Promise.all([
        slowReader(address(), key, { gets: 1000, holdMs: 10_000, pid: node.pid, giveUpAt: bound }),
        A.sleep(3000).then(() => victim(address(), 'slow-reader')),
      ]),
    );
    row.note = result[0];
    expect(node.running).toBe(true);
    expect(row.peak, `peak RSS ${mib(row.peak)} MiB over the bound ${mib(bound)} MiB (${result[0]})`).toBeLessThan(
      bound,
    );
    await victim(address(), 'after-slow-reader');
  }, 60_000);

  it('ends unary Puts stalled one byte short of their 1 MiB message within 15 s (DEADLINE_EXCEEDED or CANCELLED), its memory returning, while serving others', async () => {
    const { value: r, row } = await watched('20 Puts stalled 1 byte short', () =>
      Promise.all([
        // fraction 1: the whole message but its last byte.
        A.stalledPuts(address(), { streams: 20, connections: 2, messageBytes: MiB, fraction: 1, holdMs: 15_000 }),
        A.sleep(2000).then(() => victim(address(), 'stalled')),
      ]),
    );
    const stalled = r[0];
    row.note = stalled.result;
    for (const outcome of Object.keys(stalled.outcomes ?? {}))
      expect(outcome, stalled.result).toMatch(/^(DEADLINE_EXCEEDED|CANCELLED): \S/);
    expect(node.running).toBe(true);
    await waitFor(
      'the node RSS back within 64 MiB of before',
      10_000,
      () => mem(node.pid).rss < row.rssBefore + 64 * MiB || undefined,
      250,
    ).finally(() => settled(row));
  }, 60_000);
});
