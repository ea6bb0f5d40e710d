/**
 * What a node lets in (transport/admission.ts), on a real gRPC server on 127.0.0.1:
 * connections over the limit, calls per connection over the limit, and requests that do
 * not decode.
 */
import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Admission,
  GuardedServer,
  MAX_DETAILS_CHARS,
  listenAdmitted,
  type AdmissionLimits,
  type Refused,
} from '../../../src/transport/admission.js';
import { RETRY_PUSHBACK_MS } from '../../../src/transport/status.js';
import { goawayZombies } from '../../../testkit/hostile/attacks.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const Health = grpc.makeGenericClientConstructor(healthService, 'Health');

const raw = (b: Buffer): Buffer => b;
/** A method that fails with the message it was sent, as a handler quoting its input does. */
const ECHO = {
  path: '/test.Echo/Fail',
  requestStream: false,
  responseStream: false,
  requestSerialize: raw,
  requestDeserialize: raw,
  responseSerialize: raw,
  responseDeserialize: raw,
};

async function serve(
  limits: AdmissionLimits,
  idleEvictMs?: number,
  arrivalMs?: number,
  options: grpc.ServerOptions = {},
): Promise<{ address: string; admission: Admission; refused: Refused[] }> {
  const refused: Refused[] = [];
  const admission = new Admission(
    () => limits,
    (r) => refused.push(r),
    { idleEvictMs, arrivalMs, slowArrivalMs: arrivalMs === undefined ? undefined : arrivalMs / 3 },
  );
  const server = new GuardedServer({ ...options, interceptors: [admission.interceptor()] });
  new HealthImplementation({ '': 'SERVING' }).addToServer(server);
  server.addService(
    { Fail: ECHO },
    {
      Fail: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        cb({ code: grpc.status.INVALID_ARGUMENT, details: `bad name ${call.request.toString()}` }),
    },
  );
  const { port, close } = await listenAdmitted(
    server,
    '127.0.0.1',
    0,
    grpc.ServerCredentials.createInsecure(),
    admission,
  );
  cleanup.push(() => {
    close();
    server.forceShutdown();
    admission.destroyAll();
  });
  return { address: `127.0.0.1:${port}`, admission, refused };
}

/** A client on a connection of its own (no subchannel shared with other clients). */
function client(address: string): grpc.Client {
  const c = new Health(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  cleanup.push(() => c.close());
  return c;
}

function check(c: grpc.Client): Promise<{ code: grpc.status; details: string; pushback?: string }> {
  return new Promise((resolve) =>
    (c as unknown as { check: (req: unknown, cb: (e: grpc.ServiceError | null) => void) => void }).check(
      { service: '' },
      (e) =>
        resolve({
          code: e?.code ?? grpc.status.OK,
          details: e?.details ?? '',
          pushback: e?.metadata.get('grpc-retry-pushback-ms')[0] as string | undefined,
        }),
    ),
  );
}

/** A Watch call held open (health's server stream), for counting calls on a connection. */
function watch(c: grpc.Client): grpc.ClientReadableStream<unknown> {
  const call = (c as unknown as { watch: (req: unknown) => grpc.ClientReadableStream<unknown> }).watch({ service: '' });
  call.on('error', () => {});
  return call;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok(), what).toBe(true);
}

describe('admission', () => {
  it('answers calls on a connection over the limit RESOURCE_EXHAUSTED with retry advice, then takes new ones once others close', async () => {
    const { address, admission, refused } = await serve({ maxConnections: 2, maxCallsPerConnection: 100 });
    const [a, b, c] = [client(address), client(address), client(address)];
    expect((await check(a)).code).toBe(grpc.status.OK);
    expect((await check(b)).code).toBe(grpc.status.OK);
    const over = await check(c);
    expect(over).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: /already serves 2 connections.*--max-connections.*none of them idle.*retry/,
      pushback: String(RETRY_PUSHBACK_MS),
    });
    expect(refused.at(-1)).toMatchObject({
      path: '/grpc.health.v1.Health/Check',
      code: grpc.status.RESOURCE_EXHAUSTED,
    });
    // The connection over the limit is closed after its grace period; one of the others closes too.
    a.close();
    await until('the closed connections to be forgotten', () => admission.connections === 1);
    const d = client(address);
    expect((await check(d)).code).toBe(grpc.status.OK);
  });

  it('at the limit, closes the connection idle longest to make room, never one with a call open', async () => {
    const { address, admission } = await serve({ maxConnections: 2, maxCallsPerConnection: 100 }, 100);
    const [busy, idle, fresh] = [client(address), client(address), client(address)];
    const w = watch(busy);
    let closed = false;
    w.on('error', () => (closed = true)).on('end', () => (closed = true));
    await new Promise((r) => w.once('data', r));
    expect((await check(idle)).code).toBe(grpc.status.OK);
    await new Promise((r) => setTimeout(r, 150));
    // `idle` has had no call for longer than 100 ms: `fresh` takes its place.
    expect((await check(fresh)).code).toBe(grpc.status.OK);
    expect(admission.connections).toBe(2);
    // The watch on `busy` was not touched; `idle` reconnects when it calls again (taking the place of `fresh`, idle by then).
    await new Promise((r) => setTimeout(r, 150));
    expect((await check(idle)).code).toBe(grpc.status.OK);
    expect(closed, 'the connection with a call open was closed').toBe(false);
    w.cancel();
  });

  it('refuses a call over the per-connection limit, and counts a call only until it ends or is cancelled', async () => {
    const { address } = await serve({ maxConnections: 10, maxCallsPerConnection: 2 });
    const c = client(address);
    const w1 = watch(c);
    const w2 = watch(c);
    await new Promise((r) => w2.once('data', r));
    const over = await check(c);
    expect(over).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: /already has 2 calls open.*--max-calls-per-connection/,
      pushback: String(RETRY_PUSHBACK_MS),
    });
    // Another connection is not held back by this one's calls.
    expect((await check(client(address))).code).toBe(grpc.status.OK);
    w1.cancel();
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) {
      ok = (await check(c)).code === grpc.status.OK;
      if (!ok) await new Promise((r) => setTimeout(r, 20));
    }
    expect(ok, 'a cancelled call still counted').toBe(true);
    w2.cancel();
  });

  it('answers a unary call that ends without its request message INVALID_ARGUMENT, not UNIMPLEMENTED', async () => {
    const { address } = await serve({ maxConnections: 10, maxCallsPerConnection: 10 });
    const session = connect(`http://${address}`);
    cleanup.push(() => session.destroy());
    const stream = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const status = new Promise<Record<string, unknown>>((resolve) =>
      stream.on('trailers', resolve).on('response', (h) => h['grpc-status'] !== undefined && resolve(h)),
    );
    stream.on('data', () => {}).on('error', () => {});
    stream.end(Buffer.from([0, 0, 0, 0, 9, 1])); // announces 9 bytes, sends 1, ends
    const t = await status;
    expect(Number(t['grpc-status'])).toBe(grpc.status.INVALID_ARGUMENT);
    expect(decodeURIComponent(String(t['grpc-message']))).toMatch(
      /Check takes exactly one request message; the call ended without a whole one/,
    );
  });

  it('answers a request that does not decode INVALID_ARGUMENT, not INTERNAL', async () => {
    const { address, refused } = await serve({ maxConnections: 10, maxCallsPerConnection: 10 });
    const c = client(address);
    const raw = (b: Buffer): Buffer => b;
    const e = await new Promise<grpc.ServiceError | null>((resolve) =>
      c.makeUnaryRequest('/grpc.health.v1.Health/Check', raw, raw, Buffer.from([0x0a, 0xff]), (err) => resolve(err)),
    );
    expect(e).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: /does not decode as this method's message/,
    });
    expect(refused.at(-1)).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect((await check(c)).code).toBe(grpc.status.OK);
  });

  it("cuts a status message that quotes a long input, so that the caller's connection survives it", async () => {
    const { address } = await serve({ maxConnections: 10, maxCallsPerConnection: 10 });
    const c = client(address);
    const e = await new Promise<grpc.ServiceError | null>((resolve) =>
      c.makeUnaryRequest(ECHO.path, raw, raw, Buffer.alloc(200_000, 'x'), { deadline: Date.now() + 5000 }, (err) =>
        resolve(err),
      ),
    );
    expect(e?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(e!.details.length).toBeLessThan(MAX_DETAILS_CHARS + 100);
    expect(e!.details).toMatch(/^bad name x+… \(\d+ more characters cut\)$/);
    expect((await check(c)).code).toBe(grpc.status.OK);
  });

  it('ends a unary call whose request does not arrive in full in time, and counts it no longer', async () => {
    const { address, admission } = await serve({ maxConnections: 10, maxCallsPerConnection: 1 }, undefined, 300);
    const session = connect(`http://${address}`);
    cleanup.push(() => session.destroy());
    const stream = session.request({
      ':method': 'POST',
      ':path': ECHO.path,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const trailers = new Promise<Record<string, unknown>>((resolve) =>
      stream.on('trailers', resolve).on('response', (h) => h['grpc-status'] !== undefined && resolve(h)),
    );
    stream.on('error', () => {});
    // Announce 1 MiB, send 10 bytes of it, and stall.
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(1 << 20, 1);
    stream.write(Buffer.concat([prefix, Buffer.alloc(10)]));
    const t = await trailers;
    expect(Number(t['grpc-status'])).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(decodeURIComponent(String(t['grpc-message']))).toMatch(/did not arrive in full within 0.3 s of its headers/);
    expect(admission.counts.arrivedLate).toBe(1);
    // The connection's one call slot is free again.
    const s2 = session.request({
      ':method': 'POST',
      ':path': '/grpc.health.v1.Health/Check',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const t2 = new Promise<Record<string, unknown>>((resolve) => s2.on('trailers', resolve));
    s2.on('data', () => {});
    s2.end(Buffer.alloc(5));
    expect(Number((await t2)['grpc-status'])).toBe(grpc.status.OK);
  });

  it('lets a burst of calls whose messages follow at once through, and ends slow arrivals over the cap at once', async () => {
    const refused: Refused[] = [];
    const admission = new Admission(
      () => ({ maxConnections: 10, maxCallsPerConnection: 1000 }),
      (r) => refused.push(r),
      { arrivalMs: 2000, slowArrivalMs: 200, maxSlowArrivals: 2 },
    );
    const server = new GuardedServer({ interceptors: [admission.interceptor()] });
    new HealthImplementation({ '': 'SERVING' }).addToServer(server);
    const { port, close } = await listenAdmitted(
      server,
      '127.0.0.1',
      0,
      grpc.ServerCredentials.createInsecure(),
      admission,
    );
    cleanup.push(() => {
      close();
      server.forceShutdown();
      admission.destroyAll();
    });
    const c = client(`127.0.0.1:${port}`);
    const burst = await Promise.all(Array.from({ length: 500 }, () => check(c)));
    expect(burst.every((r) => r.code === grpc.status.OK)).toBe(true);
    // Five calls that stall: two may wait for the full 2 s, three are ended after 200 ms.
    const session = connect(`http://127.0.0.1:${port}`);
    cleanup.push(() => session.destroy());
    const started = Date.now();
    const stalled = await Promise.all(
      Array.from({ length: 5 }, () => {
        const stream = session.request({
          ':method': 'POST',
          ':path': '/grpc.health.v1.Health/Check',
          'content-type': 'application/grpc',
          te: 'trailers',
        });
        stream.on('error', () => {});
        stream.write(Buffer.from([0, 0, 0, 0, 9, 1]));
        return new Promise<{ code: number; ms: number }>((resolve) =>
          stream
            .on('trailers', (t) => resolve({ code: Number(t['grpc-status']), ms: Date.now() - started }))
            .on(
              'response',
              (h) =>
                h['grpc-status'] !== undefined && resolve({ code: Number(h['grpc-status']), ms: Date.now() - started }),
            ),
        );
      }),
    );
    const shed = stalled.filter((x) => x.code === grpc.status.RESOURCE_EXHAUSTED);
    const late = stalled.filter((x) => x.code === grpc.status.DEADLINE_EXCEEDED);
    expect(shed).toHaveLength(3);
    expect(late).toHaveLength(2);
    for (const x of shed) expect(x.ms).toBeLessThan(1500);
    for (const x of late) expect(x.ms).toBeGreaterThanOrEqual(1900);
    expect(refused.find((r) => r.code === grpc.status.RESOURCE_EXHAUSTED)?.details).toMatch(
      /2 others are arriving as slowly/,
    );
  });

  it("closes connections HTTP/2 gave up on after a peer's protocol error, once idle (grpc.max_connection_idle_ms, as a node sets it)", async () => {
    const { address, admission } = await serve(
      { maxConnections: 100, maxCallsPerConnection: 10 },
      undefined,
      undefined,
      { 'grpc.max_connection_idle_ms': 300 },
    );
    const attack = goawayZombies(address, { connections: 10, holdMs: 3000 });
    await until('the zombies to be counted', () => admission.connections === 10);
    await until('the zombies to be closed', () => admission.connections === 0);
    expect((await attack).result).toMatch(/connection closed by server/);
  });
});
