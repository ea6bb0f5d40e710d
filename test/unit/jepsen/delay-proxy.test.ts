/**
 * The delaying proxy of the slow nemesis (testkit/jepsen/delay-proxy.ts), on 127.0.0.1: bytes
 * arrive intact and in order both ways, none before the minimum delay (a lower bound:
 * a functional check, not a timing target), half-closes and resets are passed on, and the
 * proxy (in process or as its own process) stops cleanly.
 */
import { randomBytes } from 'node:crypto';
import * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DelayProxy, ProxyProcess } from '../../../testkit/jepsen/delay-proxy.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server on 127.0.0.1 that records what arrives (offset and time of each read) and echoes it, unless told not to. */
async function server(echo = true): Promise<{
  port: number;
  received: () => Buffer;
  reads: { at: number; end: number }[];
  ended: Promise<number>;
  remotePorts: number[];
}> {
  const chunks: Buffer[] = [];
  const reads: { at: number; end: number }[] = [];
  const remotePorts: number[] = [];
  let total = 0;
  let ended!: (at: number) => void;
  const endedP = new Promise<number>((r) => (ended = r));
  const sockets = new Set<net.Socket>();
  const s = net.createServer({ allowHalfOpen: true }, (c) => {
    sockets.add(c);
    remotePorts.push(c.remotePort!);
    c.setNoDelay(true);
    c.on('data', (d: Buffer) => {
      total += d.length;
      reads.push({ at: performance.now(), end: total });
      chunks.push(d);
      if (echo) c.write(d);
    });
    c.on('end', () => (ended(performance.now()), c.end()));
    c.on('error', () => undefined);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  cleanups.push(() => {
    for (const c of sockets) c.destroy();
    return new Promise((r) => s.close(r));
  });
  return {
    port: (s.address() as net.AddressInfo).port,
    received: () => Buffer.concat(chunks),
    reads,
    ended: endedP,
    remotePorts,
  };
}

async function proxyTo(
  port: number,
  delay?: { delayMs: number; jitterMs: number },
  ports?: [number, number],
): Promise<{ proxy: DelayProxy; port: number }> {
  const proxy = new DelayProxy();
  proxy.setDelay(delay);
  const [p] = await proxy.listen([
    {
      listenHost: '127.0.0.1',
      listenPort: 0,
      upstreamHost: '127.0.0.1',
      upstreamPort: port,
      ...(ports ? { localPortMin: ports[0], localPortMax: ports[1] } : {}),
    },
  ]);
  cleanups.push(() => proxy.close());
  return { proxy, port: p! };
}

function connect(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => resolve(c));
    c.setNoDelay(true);
    c.once('error', reject);
    cleanups.push(() => c.destroy());
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** For each read (offset `end` at time `at`), the time its last byte was sent. */
function sentAt(sends: { at: number; end: number }[], offset: number): number {
  return sends.find((s) => s.end > offset)!.at;
}

describe('the delaying proxy', () => {
  it('delivers every byte intact and in order both ways, none earlier than the minimum delay', async () => {
    const srv = await server();
    const { proxy, port } = await proxyTo(srv.port, { delayMs: 60, jitterMs: 20 });
    const c = await connect(port);
    const back: Buffer[] = [];
    const backReads: { at: number; end: number }[] = [];
    let backTotal = 0;
    c.on('data', (d: Buffer) => {
      back.push(d);
      backTotal += d.length;
      backReads.push({ at: performance.now(), end: backTotal });
    });
    // Chunks of random sizes, some back to back, some with gaps: jitter would reorder them if the proxy let it.
    const sent: Buffer[] = [];
    const sends: { at: number; end: number }[] = [];
    let total = 0;
    for (let i = 0; i < 120; i++) {
      const b = randomBytes(1 + Math.floor(Math.random() * (i % 10 === 0 ? 200_000 : 3000)));
      sends.push({ at: performance.now(), end: (total += b.length) });
      c.write(b);
      sent.push(b);
      if (i % 3 === 0) await sleep(Math.random() * 8);
    }
    const all = Buffer.concat(sent);
    for (let i = 0; i < 200 && backTotal < all.length; i++) await sleep(50);
    expect(srv.received().equals(all)).toBe(true);
    expect(Buffer.concat(back).equals(all)).toBe(true);
    // Lower bounds: one way at least delay − jitter, there and back at least twice that.
    for (const r of srv.reads) expect(r.at - sentAt(sends, r.end - 1)).toBeGreaterThanOrEqual(40);
    for (const r of backReads) expect(r.at - sentAt(sends, r.end - 1)).toBeGreaterThanOrEqual(80);
    expect(proxy.stats()).toMatchObject({ connections: 1, accepted: 1 });
    expect(proxy.stats().bytes).toBe(2 * all.length);
  }, 30_000);

  it('samples delays within delay ± jitter, and never below zero', () => {
    const p = new DelayProxy();
    p.setDelay({ delayMs: 200, jitterMs: 50 });
    const xs = Array.from({ length: 5000 }, () => p.sample());
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...xs)).toBeLessThanOrEqual(250);
    p.setDelay({ delayMs: 10, jitterMs: 50 });
    expect(Math.min(...Array.from({ length: 1000 }, () => p.sample()))).toBeGreaterThanOrEqual(0);
    p.setDelay(undefined);
    expect(p.sample()).toBe(0);
    expect(() => p.setDelay({ delayMs: -1, jitterMs: 0 })).toThrow(/bad delay/);
  });

  it('keeps the order when the delay is lifted mid-stream: a later chunk never overtakes an earlier one', async () => {
    const srv = await server(false);
    const { proxy, port } = await proxyTo(srv.port, { delayMs: 150, jitterMs: 0 });
    const c = await connect(port);
    const t0 = performance.now();
    c.write('first,');
    await sleep(20);
    proxy.setDelay(undefined);
    c.write('second');
    for (let i = 0; i < 100 && srv.received().length < 12; i++) await sleep(10);
    expect(srv.received().toString()).toBe('first,second');
    // "second" waited behind "first": nothing arrived before first's 150 ms.
    expect(srv.reads[0]!.at - t0).toBeGreaterThanOrEqual(150);
    // Once the queue is empty, with no delay, bytes go through at once.
    const t1 = performance.now();
    c.write('third');
    for (let i = 0; i < 100 && srv.received().length < 17; i++) await sleep(5);
    expect(srv.received().toString()).toBe('first,secondthird');
    expect(srv.reads.at(-1)!.at - t1).toBeLessThan(100);
  });

  it('passes a half-close on after the bytes before it, and the connection closes on both sides', async () => {
    const srv = await server();
    const { proxy, port } = await proxyTo(srv.port, { delayMs: 50, jitterMs: 10 });
    const c = await connect(port);
    const got: Buffer[] = [];
    c.on('data', (d: Buffer) => got.push(d));
    const closed = new Promise<void>((r) => c.once('close', () => r()));
    const ended = new Promise<void>((r) => c.once('end', () => r()));
    const t0 = performance.now();
    c.end('bye');
    const serverEnd = await srv.ended;
    expect(serverEnd - t0).toBeGreaterThanOrEqual(40);
    expect(srv.received().toString()).toBe('bye');
    await ended;
    // The echo, then the server's own end, came back through the proxy.
    expect(Buffer.concat(got).toString()).toBe('bye');
    await closed;
    for (let i = 0; i < 50 && proxy.stats().connections > 0; i++) await sleep(10);
    expect(proxy.stats().connections).toBe(0);
  });

  it('passes a reset on, and closes the client when the upstream refuses', async () => {
    const srv = await server();
    const { proxy, port } = await proxyTo(srv.port, { delayMs: 20, jitterMs: 0 });
    const c = await connect(port);
    c.write('x');
    await sleep(100);
    c.resetAndDestroy();
    for (let i = 0; i < 50 && proxy.stats().connections > 0; i++) await sleep(10);
    expect(proxy.stats().connections).toBe(0);

    // Nothing listens upstream: the client is closed, nothing leaks.
    const dead = await server();
    const nowhere = dead.port;
    await cleanups.splice(cleanups.length - 1, 1)[0]!();
    const p2 = await proxyTo(nowhere);
    const c2 = await connect(p2.port);
    // Half-open allowed here: the proxy's end arrives as 'end' (or a reset as 'close').
    await new Promise<void>((r) => (c2.once('end', () => r()), c2.once('close', () => r())));
    for (let i = 0; i < 50 && p2.proxy.stats().connections > 0; i++) await sleep(10);
    expect(p2.proxy.stats()).toMatchObject({ connections: 0, accepted: 1 });
  });

  it('opens upstream connections from its own local port range when told to', async () => {
    const srv = await server();
    const base = 40000 + Math.floor(Math.random() * 5000);
    const { port } = await proxyTo(srv.port, undefined, [base, base + 9]);
    for (let i = 0; i < 3; i++) {
      const c = await connect(port);
      c.write('hi');
      await new Promise((r) => c.once('data', r));
    }
    expect(srv.remotePorts).toHaveLength(3);
    for (const p of srv.remotePorts) expect(p >= base && p <= base + 9, `${p}`).toBe(true);
  });

  it('stops cleanly: no more listening, every connection dropped', async () => {
    const srv = await server();
    const proxy = new DelayProxy();
    proxy.setDelay({ delayMs: 30, jitterMs: 5 });
    const [port] = await proxy.listen([
      { listenHost: '127.0.0.1', listenPort: 0, upstreamHost: '127.0.0.1', upstreamPort: srv.port },
    ]);
    const c = await connect(port!);
    const closed = new Promise<void>((r) => c.once('close', () => r()));
    c.write('pending'); // still queued when the proxy stops
    await proxy.close();
    await closed;
    await expect(connect(port!)).rejects.toThrow(/ECONNREFUSED/);
    await expect(
      proxy.listen([{ listenHost: '127.0.0.1', listenPort: 0, upstreamHost: '127.0.0.1', upstreamPort: srv.port }]),
    ).rejects.toThrow(/closed/);
  });
});

describe('the proxy process', () => {
  it('takes commands on stdin, forwards with the delay asked for, and exits when killed or when its harness goes', async () => {
    const srv = await server();
    const p = await ProxyProcess.start([], `rkj${process.pid}-unit`);
    cleanups.push(() => p.stop());
    const { ports } = await p.request({
      op: 'listen',
      routes: [{ listenHost: '127.0.0.1', listenPort: 0, upstreamHost: '127.0.0.1', upstreamPort: srv.port }],
    });
    await p.request({ op: 'delay', delay: { delayMs: 80, jitterMs: 10 } });
    const c = await connect(ports![0]!);
    const t0 = performance.now();
    c.write('ping');
    await new Promise((r) => c.once('data', r));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    p.send({ op: 'delay' });
    const { stats } = await p.request({ op: 'stats' });
    expect(stats).toMatchObject({ connections: 1, accepted: 1 });
    const t1 = performance.now();
    c.write('pong');
    await new Promise((r) => c.once('data', r));
    expect(performance.now() - t1).toBeLessThan(140);
    await expect(
      p.request({
        op: 'listen',
        routes: [{ listenHost: '127.0.0.1', listenPort: ports![0]!, upstreamHost: '127.0.0.1', upstreamPort: 1 }],
      }),
    ).rejects.toThrow(/already forwards/);
    await p.stop();
    expect(p.running).toBe(false);
    await expect(connect(ports![0]!)).rejects.toThrow(/ECONNREFUSED/);

    // Its stdin closing (the harness died) ends it too.
    const q = await ProxyProcess.start([], `rkj${process.pid}-unit2`);
    cleanups.push(() => q.stop());
    const exited = new Promise<number | null>((r) => q.child.once('exit', (code) => r(code)));
    q.child.stdin!.end();
    expect(await exited).toBe(0);
  }, 60_000);
});
