/**
 * TLS and credentials on real processes: three nodes with certificates from one CA and
 * client auth on. Clients with and without certificates, certificates from another CA
 * and with the wrong role, a rogue node trying to gossip its way in, a node whose
 * certificate expired, and a certificate replaced while the node runs (SIGHUP). With TLS
 * off, the admin token: from operators, and from one node to another in a commit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, Client } from '../../src/client/index.js';
import { makeCerts } from '../../src/cli/dev-certs.js';
import { issue, newCa } from '../../src/cli/dev-ca.js';
import { NodeProcess, TestCluster, httpOf } from '../../testkit/node-cluster.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';

const certs = mkdtempSync(join(tmpdir(), 'ringkv-tls-certs-'));
const at = (name: string) => ({ cert: join(certs, `${name}.pem`), key: join(certs, `${name}-key.pem`) });
const CA = join(certs, 'ca.pem');
const tlsFlags = (name: string): string[] => ['--tls-cert', at(name).cert, '--tls-key', at(name).key, '--tls-ca', CA];
const asAdmin = { tls: { ca: CA, ...at('admin') } };
const asClient = { tls: { ca: CA, ...at('client') } };

async function failure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (e) {
    return e as grpc.ServiceError;
  }
  throw new Error('expected the call to fail');
}

describe('a cluster with TLS and client auth', () => {
  let cluster: TestCluster;
  const extra: NodeProcess[] = [];
  const clients: { close(): void }[] = [];
  const track = <T extends { close(): void }>(c: T): T => (clients.push(c), c);

  beforeAll(async () => {
    await makeCerts({
      dir: certs,
      nodes: ['n1', 'n2', 'n3', 'n4'],
      hosts: ['127.0.0.1', 'localhost'],
      admins: ['admin'],
      clients: ['client'],
      days: 30,
      force: false,
    });
    // A node certificate from another CA, a CA-issued certificate with role client posing as a node, an expired node certificate.
    const other = await newCa('not the cluster CA');
    const write = (name: string, pem: { cert: string; key: string }) => {
      writeFileSync(at(name).cert, pem.cert);
      writeFileSync(at(name).key, pem.key);
    };
    write('rogue', await issue(other, { name: 'rogue', role: 'node', hosts: ['127.0.0.1'] }));
    // The rogue trusts the cluster's CA (so it can dial the nodes) besides its own.
    writeFileSync(join(certs, 'rogue-ca.pem'), readFileSync(CA, 'utf8') + other.cert);
    writeFileSync(join(certs, 'other-ca.pem'), other.cert);
    const ca = { cert: readFileSync(CA, 'utf8'), key: readFileSync(join(certs, 'ca-key.pem'), 'utf8') };
    write('impostor', await issue(ca, { name: 'impostor', role: 'client', hosts: ['127.0.0.1'] }));
    write(
      'expired',
      await issue(ca, {
        name: 'n9',
        role: 'node',
        hosts: ['127.0.0.1'],
        notBefore: new Date(Date.now() - 3 * 86_400_000),
        notAfter: new Date(Date.now() - 86_400_000),
      }),
    );

    cluster = await TestCluster.create(3, 1, ['--client-auth', 'cert', '--request-timeout-ms', '2000'], tlsFlags);
    for (const n of cluster.nodes) {
      n.security = asAdmin;
      n.start();
    }
    await waitFor(
      'n1..n3 normal and up everywhere, over TLS',
      60_000,
      async () => {
        const views = await cluster.views();
        return views.every(
          (v) => v !== undefined && v.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up),
        );
      },
      250,
    );
  }, 90_000);

  afterAll(() => {
    for (const c of clients) c.close();
    for (const n of extra) n.close();
    cluster?.destroy();
    rmSync(certs, { recursive: true, force: true });
  });

  it('serves a client with a certificate from the CA (streamed and unary, token-aware)', async () => {
    const c = track(new Client({ nodes: [cluster.nodes[0]!.address], ...asClient }));
    await c.put('tls-key', 'over tls', { w: 3 });
    expect((await c.get('tls-key', { r: 3 })).values.map(String)).toEqual(['over tls']);
    const unary = track(
      new Client({ nodes: [cluster.nodes[1]!.address], streaming: false, tokenAware: false, ...asClient }),
    );
    expect((await unary.get('tls-key')).values.map(String)).toEqual(['over tls']);
  });

  it('refuses key/value calls without a client certificate: UNAUTHENTICATED, saying what is missing', async () => {
    const c = track(new Client({ nodes: [cluster.nodes[0]!.address], tokenAware: false, tls: { ca: CA } }));
    const e = await failure(c.put('tls-key', 'no cert'));
    expect(e.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(e.details).toMatch(/requires a client certificate issued by the cluster's CA/);
    const unary = track(
      new Client({ nodes: [cluster.nodes[0]!.address], tokenAware: false, streaming: false, tls: { ca: CA } }),
    );
    expect((await failure(unary.get('tls-key'))).code).toBe(grpc.status.UNAUTHENTICATED);
    // A certificate from another CA is not verified, so it counts as none.
    const rogue = track(
      new Client({ nodes: [cluster.nodes[0]!.address], tokenAware: false, tls: { ca: CA, ...at('rogue') } }),
    );
    expect((await failure(rogue.get('tls-key'))).code).toBe(grpc.status.UNAUTHENTICATED);
    expect(
      cluster.nodes[0]!.lines.some(
        (l) => l.msg.startsWith('call refused') && l.method === '/ringkv.v1.KeyValue/Stream',
      ),
    ).toBe(true);
  });

  it('a plaintext client cannot talk to it at all (UNAVAILABLE), nor can one that does not trust its CA', async () => {
    const plain = track(new Client({ nodes: [cluster.nodes[0]!.address], tokenAware: false, deadlineMs: 2000 }));
    expect((await failure(plain.get('tls-key'))).code).toBe(grpc.status.UNAVAILABLE);
    const wrongCa = track(
      new Client({
        nodes: [cluster.nodes[0]!.address],
        tokenAware: false,
        deadlineMs: 2000,
        tls: { ca: join(certs, 'other-ca.pem') },
      }),
    );
    const e = await failure(wrongCa.get('tls-key'));
    expect(e.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('ringkv transfers asks every member with the credentials it was given, not only --node', async () => {
    // It used to ask the other members without them: over TLS each showed as unreachable.
    const main = join(import.meta.dirname, '../../src/cli/main.ts');
    const n1 = cluster.nodes[0]!;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        main,
        'transfers',
        '--json',
        '--node',
        n1.address,
        '--tls-ca',
        CA,
        '--tls-cert',
        at('admin').cert,
        '--tls-key',
        at('admin').key,
      ],
      { timeout: 30_000 },
    );
    expect((JSON.parse(stdout) as { nodeId: string }[]).map((r) => r.nodeId).sort()).toEqual(['n1', 'n2', 'n3']);
  });

  it('operator calls need role admin: a client certificate is PERMISSION_DENIED, an admin one passes; status stays readable', async () => {
    const n1 = cluster.nodes[0]!;
    const asClientAdmin = track(new AdminClient(n1.address, 3000, asClient));
    expect((await asClientAdmin.status()).members).toHaveLength(3); // reads are open
    const e = await failure(asClientAdmin.plan([]));
    expect(e.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(e.details).toMatch(/has role\(s\) client; it needs role admin/);
    const ops = track(new AdminClient(n1.address, 3000, asAdmin));
    await expect(ops.plan([])).resolves.toBeDefined();
  });

  it('a node with a certificate from another CA, or with role client, cannot join: its gossip is refused and logged', async () => {
    const seeds = cluster.nodes[0]!.address;
    for (const name of ['rogue', 'impostor']) {
      const port = await freePort();
      const flags =
        name === 'rogue'
          ? ['--tls-cert', at(name).cert, '--tls-key', at(name).key, '--tls-ca', join(certs, 'rogue-ca.pem')]
          : tlsFlags(name);
      const p = new NodeProcess(name, `127.0.0.1:${port}`, join(cluster.root, name), [
        '--id',
        name,
        '--listen',
        `127.0.0.1:${port}`,
        '--data-dir',
        join(cluster.root, name),
        '--seeds',
        seeds,
        ...flags,
      ]);
      extra.push(p);
      p.start();
    }
    const n1 = cluster.nodes[0]!;
    await waitFor('n1 to refuse gossip from both', 20_000, () => {
      const refused = n1.lines.filter(
        (l) => l.msg.startsWith('call refused') && l.method === '/ringkv.internal.v1.Gossip/Exchange',
      );
      return refused.some((l) => l.code === 'UNAUTHENTICATED') && refused.some((l) => l.code === 'PERMISSION_DENIED')
        ? true
        : undefined;
    });
    const views = await cluster.views();
    for (const v of views) expect(v!.members.map((m) => m.id).sort()).toEqual(['n1', 'n2', 'n3']);
  });

  it('a node whose certificate expired does not start, and says why', async () => {
    const port = await freePort();
    const p = new NodeProcess('n9', `127.0.0.1:${port}`, join(cluster.root, 'n9'), [
      '--id',
      'n9',
      '--listen',
      `127.0.0.1:${port}`,
      '--data-dir',
      join(cluster.root, 'n9'),
      ...tlsFlags('expired'),
    ]);
    extra.push(p);
    p.start();
    expect(await p.exit).toBe(1);
    expect(p.stderr).toMatch(/TLS: the certificate in .*expired\.pem expired on .*issue a new one/);
  });

  it('takes a new certificate on SIGHUP without a restart, and keeps serving with it', async () => {
    const n2 = cluster.nodes[1]!;
    const ca = { cert: readFileSync(CA, 'utf8'), key: readFileSync(join(certs, 'ca-key.pem'), 'utf8') };
    const renewed = await issue(ca, { name: 'n2', role: 'node', hosts: ['127.0.0.1', 'localhost'] });
    writeFileSync(at('n2').key, renewed.key);
    writeFileSync(at('n2').cert, renewed.cert);
    n2.signal('SIGHUP');
    const fingerprint = new (await import('node:crypto')).X509Certificate(renewed.cert).fingerprint256;
    await waitFor(
      'n2 to load the new certificate',
      10_000,
      () => n2.lines.some((l) => l.msg === 'TLS files reloaded' && l.fingerprint === fingerprint) || undefined,
    );
    // A new connection to n2 gets the new certificate, and the cluster still works through it.
    const c = track(new Client({ nodes: [n2.address], tokenAware: false, ...asClient }));
    await c.put('after-reload', 'yes', { w: 3 });
    expect((await c.get('after-reload', { r: 3 })).values.map(String)).toEqual(['yes']);
  });
});

describe('a node with TLS off and an admin token', () => {
  let cluster: TestCluster;
  const dir = mkdtempSync(join(tmpdir(), 'ringkv-token-'));
  const TOKEN = 'b5e1c0ffee-token-for-the-test-0001';
  afterAll(() => {
    cluster?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses calls that change the cluster without the token (UNAUTHENTICATED) and takes them with it; key/value and reads stay open', async () => {
    const file = join(dir, 'admin.token');
    writeFileSync(file, `${TOKEN}\n`);
    // n2 starts in the next test, as a standby.
    cluster = await TestCluster.create(2, 1, ['--replicas', '1', '--admin-token-file', file], (id) =>
      id === 'n2' ? ['--join', 'manual'] : [],
    );
    const n1 = cluster.nodes[0]!;
    n1.start();
    await waitFor(
      'n1 normal',
      30_000,
      async () => (await n1.status())?.members.every((m) => m.status === 'normal') || undefined,
      250,
    );
    expect(n1.lines.some((l) => l.msg.startsWith('TLS off: traffic is plaintext') && l.adminToken === true)).toBe(true);

    const anon = new AdminClient(n1.address, 3000);
    const wrong = new AdminClient(n1.address, 3000, { token: 'not-the-token-at-all-0000' });
    const ops = new AdminClient(n1.address, 3000, { token: TOKEN });
    const kv = new Client({ nodes: [n1.address], tokenAware: false });
    try {
      const e = await failure(anon.plan([]));
      expect(e.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(e.details).toMatch(/present the admin token/);
      const w = await failure(wrong.plan([]));
      expect(w.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(w.details).toMatch(/not the admin token/);
      await expect(ops.plan([])).resolves.toBeDefined();
      expect((await anon.status()).members).toHaveLength(1);
      await kv.put('open', 'yes', { w: 1 });
      // No log line carries the token, right or wrong.
      expect(
        n1.lines.some((l) => JSON.stringify(l).includes('not-the-token') || JSON.stringify(l).includes(TOKEN)),
      ).toBe(false);
    } finally {
      for (const c of [anon, wrong, ops, kv]) c.close();
    }
  });

  it('with --read-auth credential, reads need the token too: gRPC UNAUTHENTICATED, HTTP 401, the page itself open', async () => {
    const file = join(dir, 'admin.token');
    const reads = await TestCluster.create(1, 1, [
      '--replicas',
      '1',
      '--admin-token-file',
      file,
      '--read-auth',
      'credential',
      '--http',
      '127.0.0.1:0',
    ]);
    const n = reads.nodes[0]!;
    const anon = new AdminClient(n.address, 3000);
    const ops = new AdminClient(n.address, 3000, { token: TOKEN });
    try {
      n.start();
      const http = await httpOf(n);
      await waitFor(
        'n1 normal',
        30_000,
        async () =>
          (await ops.status().catch(() => undefined))?.members.every((m) => m.status === 'normal') || undefined,
        250,
      );
      const e = await failure(anon.status());
      expect(e.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(e.details).toMatch(/--read-auth credential\): present the admin token/);
      expect((await failure(anon.ring())).code).toBe(grpc.status.UNAUTHENTICATED);
      expect((await ops.ring()).ranges.length).toBeGreaterThan(0);
      const get = (path: string, token?: string) =>
        fetch(`http://${http}${path}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
      const refused = await get('/metrics');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="ringkv"');
      expect(await refused.text()).toMatch(/send the admin token as "Authorization: Bearer <token>"/);
      expect((await get('/api/status', 'not-the-token-at-all-0000')).status).toBe(401);
      const metrics = await get('/metrics', TOKEN);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('ringkv_members');
      expect((await get('/api/status', TOKEN)).status).toBe(200);
      expect((await get('/')).status).toBe(200);
      // Each refusal is logged (throttled), without the token.
      await waitFor(
        'a refusal logged',
        5000,
        () => n.lines.some((l) => l.msg.startsWith('call refused') && l.method === 'HTTP /metrics') || undefined,
      );
      expect(
        n.lines.some((l) => JSON.stringify(l).includes(TOKEN) || JSON.stringify(l).includes('not-the-token')),
      ).toBe(false);
    } finally {
      anon.close();
      ops.close();
      reads.destroy();
    }
  }, 60_000);

  it('a commit admits a standby on another node: the driving node calls its internal Control service with the token', async () => {
    // n2 waits as a standby; committing its join on n1 makes n1 call Control Admit on n2,
    // which (TLS off) takes only the token. Before nodes sent it, n2 refused n1 and the
    // commit failed; nodes no longer steer each other through the operator's Admin service.
    const n1 = cluster.nodes[0]!;
    const n2 = cluster.nodes[1]!;
    n2.start();
    await waitFor(
      'n2 seen as a standby',
      30_000,
      async () => (await n1.status())?.members.some((m) => m.id === 'n2' && m.status === 'joining') || undefined,
      200,
    );
    const ops = new AdminClient(n1.address, 10_000, { token: TOKEN });
    try {
      await ops.plan([{ kind: 'join', node: 'n2' }]);
      await ops.commit();
      await waitFor(
        'n2 normal',
        60_000,
        async () => (await n2.status())?.members.every((m) => m.status === 'normal') || undefined,
        250,
      );
      expect([...n1.lines, ...n2.lines].some((l) => JSON.stringify(l).includes(TOKEN))).toBe(false);
    } finally {
      ops.close();
    }
  }, 120_000);
});
