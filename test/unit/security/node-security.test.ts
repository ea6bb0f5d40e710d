import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/node/config.js';
import { LogThrottle, NodeSecurity } from '../../../src/security/node-security.js';
import { hashToken } from '../../../src/security/authorize.js';

const dir = mkdtempSync(join(tmpdir(), 'ringkv-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const silent = pino({ level: 'silent' });

describe('NodeSecurity: what a node starts with', () => {
  it('refuses a missing or unusable TLS file before anything starts, naming it', () => {
    const config = resolveConfig(
      { tlsCert: join(dir, 'none.pem'), tlsKey: join(dir, 'none-key.pem'), tlsCa: join(dir, 'ca.pem') },
      {},
    );
    expect(() => new NodeSecurity(config, silent)).toThrow(
      /^TLS: cannot read the certificate file .*none\.pem: ENOENT/,
    );
  });

  it('refuses an admin token file that is missing, empty or too short, and reloads a good one on request', () => {
    const file = join(dir, 'admin.token');
    const config = resolveConfig({ adminTokenFile: file }, {});
    expect(() => new NodeSecurity(config, silent)).toThrow(/cannot read the admin token file .*admin\.token: ENOENT/);
    writeFileSync(file, 'short\n');
    expect(() => new NodeSecurity(config, silent)).toThrow(/one word of at least 16 characters/);
    writeFileSync(file, 'first-token-0123456789\n');
    const s = new NodeSecurity(config, silent);
    expect(s.rules.adminTokenHash).toEqual(hashToken('first-token-0123456789'));
    writeFileSync(file, '');
    s.reload(); // unusable: the old token stays
    expect(s.rules.adminTokenHash).toEqual(hashToken('first-token-0123456789'));
    writeFileSync(file, 'second-token-0123456789');
    s.reload();
    expect(s.rules.adminTokenHash).toEqual(hashToken('second-token-0123456789'));
  });
});

describe('NodeSecurity: its interceptor on a server, denied by default', () => {
  const bytes = {
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  };
  const method = (path: string) => ({ path, requestStream: false, responseStream: false, ...bytes });
  // Health's Check (classed open) and a method no entry of security/access.ts classes, as a new service added without one would be.
  const served = { Check: method('/grpc.health.v1.Health/Check') };
  const unclassed = { Admit: method('/ringkv.internal.v1.Unclassed/Admit') };

  async function serve(
    security: NodeSecurity,
  ): Promise<{ call(def: grpc.ServiceDefinition, name: string, token?: string): Promise<grpc.status>; close(): void }> {
    const server = new grpc.Server({ interceptors: security.interceptors() });
    server.addService(served, { Check: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.from('ok')) });
    server.addService(unclassed, {
      Admit: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.from('admitted')),
    });
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    const clients: grpc.Client[] = [];
    return {
      call: (def, name, token) => {
        const client = new (grpc.makeGenericClientConstructor(def, 'x'))(
          `127.0.0.1:${port}`,
          grpc.credentials.createInsecure(),
        );
        clients.push(client);
        const md = new grpc.Metadata();
        if (token !== undefined) md.set('authorization', `Bearer ${token}`);
        const fn = (
          client as unknown as Record<
            string,
            (req: Buffer, md: grpc.Metadata, cb: (e: grpc.ServiceError | null) => void) => void
          >
        )[name]!;
        return new Promise((res) =>
          fn.call(client, Buffer.alloc(0), md, (e) => res(e === null ? grpc.status.OK : e.code)),
        );
      },
      close: () => {
        for (const c of clients) c.close();
        server.forceShutdown();
      },
    };
  }

  it('with nothing configured (TLS off, no token), serves a classed method and refuses one without a class, PERMISSION_DENIED, and logs it', async () => {
    const lines: { msg: string; method?: string }[] = [];
    const log = pino({ level: 'warn' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const s = await serve(new NodeSecurity(resolveConfig({}, {}), log));
    try {
      expect(await s.call(served, 'Check')).toBe(grpc.status.OK);
      expect(await s.call(unclassed, 'Admit')).toBe(grpc.status.PERMISSION_DENIED);
      expect(lines.find((l) => l.method === '/ringkv.internal.v1.Unclassed/Admit')?.msg).toMatch(
        /call refused: .*has no access class on this node/,
      );
    } finally {
      s.close();
    }
  });

  it('refuses a method without a class to the admin token too', async () => {
    const file = join(dir, 'deny.token');
    writeFileSync(file, 'deny-token-0123456789\n');
    const s = await serve(new NodeSecurity(resolveConfig({ adminTokenFile: file }, {}), silent));
    try {
      expect(await s.call(served, 'Check')).toBe(grpc.status.OK);
      expect(await s.call(unclassed, 'Admit', 'deny-token-0123456789')).toBe(grpc.status.PERMISSION_DENIED);
    } finally {
      s.close();
    }
  });
});

describe('LogThrottle: refusals logged at most once a minute per caller and method', () => {
  it('holds back repeats within the period and says how many on the next line', () => {
    const t = new LogThrottle(60_000, 3);
    expect(t.note('10.0.0.9 /Gossip', 0)).toBe(0);
    expect(t.note('10.0.0.9 /Gossip', 1000)).toBeUndefined();
    expect(t.note('10.0.0.9 /Gossip', 59_999)).toBeUndefined();
    expect(t.note('10.0.0.8 /Gossip', 2000)).toBe(0); // another caller: its own line
    expect(t.note('10.0.0.9 /Gossip', 60_000)).toBe(2);
    expect(t.note('10.0.0.9 /Gossip', 60_001)).toBeUndefined();
  });

  it('stays bounded whatever the number of callers', () => {
    const t = new LogThrottle(60_000, 3);
    for (let i = 0; i < 100; i++) expect(t.note(`10.0.0.${i} /x`, 0)).toBe(0);
  });
});

describe('NodeSecurity: certificate expiry', () => {
  it('warns at start when the certificate expires within 30 days, and not otherwise', async () => {
    const { issue, newCa } = await import('../../../src/cli/dev-ca.js');
    const ca = await newCa();
    const write = async (name: string, days: number) => {
      const pem = await issue(ca, { name: 'n1', role: 'node', notAfter: new Date(Date.now() + days * 86_400_000) });
      writeFileSync(join(dir, `${name}.pem`), pem.cert);
      writeFileSync(join(dir, `${name}-key.pem`), pem.key);
    };
    writeFileSync(join(dir, 'ca.pem'), ca.cert);
    await write('soon', 10);
    await write('later', 200);
    const lines: { msg: string; daysLeft?: number }[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    for (const name of ['soon', 'later']) {
      const s = new NodeSecurity(
        resolveConfig(
          { tlsCert: join(dir, `${name}.pem`), tlsKey: join(dir, `${name}-key.pem`), tlsCa: join(dir, 'ca.pem') },
          {},
        ),
        log.child({ name }),
      );
      s.close();
    }
    const warned = lines.filter((l) => l.msg.startsWith('TLS certificate expires soon'));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.daysLeft).toBe(9);
  });
});
