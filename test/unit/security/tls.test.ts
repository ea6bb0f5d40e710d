import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issue, newCa, type Pem } from '../../../src/cli/dev-ca.js';
import { rolesOf } from '../../../src/security/roles.js';
import { TlsFiles, loadTls, type TlsPaths, type TlsReload } from '../../../src/security/tls.js';

const dir = mkdtempSync(join(tmpdir(), 'ringkv-tls-'));
let n = 0;
/** Write a certificate, its key and a CA bundle; return their paths. */
function files(leaf: Pem, ca: Pem, key = leaf.key): TlsPaths {
  const i = n++;
  const p = { cert: join(dir, `c${i}.pem`), key: join(dir, `k${i}.pem`), ca: join(dir, `ca${i}.pem`) };
  writeFileSync(p.cert, leaf.cert);
  writeFileSync(p.key, key);
  writeFileSync(p.ca, ca.cert);
  return p;
}

let ca: Pem, other: Pem, node: Pem, admin: Pem;
beforeAll(async () => {
  [ca, other] = await Promise.all([newCa(), newCa('another CA')]);
  [node, admin] = await Promise.all([
    issue(ca, { name: 'n1', role: 'node', hosts: ['127.0.0.1', 'localhost'] }),
    issue(ca, { name: 'ops', role: 'admin' }),
  ]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadTls: the files checked before they are used', () => {
  it('takes a certificate from the CA with its key, and reads its role from the subject OU', () => {
    const m = loadTls(files(node, ca));
    expect(m.roles).toEqual(['node']);
    expect(m.subject).toMatch(/CN=n1/);
    expect(m.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(loadTls(files(admin, ca)).roles).toEqual(['admin']);
  });

  it('refuses an expired certificate, and one not yet valid, saying when', async () => {
    const old = await issue(ca, {
      name: 'n1',
      role: 'node',
      notBefore: new Date(Date.now() - 10 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    expect(() => loadTls(files(old, ca))).toThrow(/expired on \d{4}-\d\d-\d\dT.*issue a new one/);
    const early = await issue(ca, { name: 'n1', role: 'node', notBefore: new Date(Date.now() + 86_400_000) });
    expect(() => loadTls(files(early, ca))).toThrow(/not valid before .*clock/);
  });

  it('refuses a certificate another CA issued', () => {
    expect(() => loadTls(files(node, other))).toThrow(/was not issued by a CA in .*issue it from the cluster's CA/);
  });

  it("refuses a key that is not the certificate's", () => {
    expect(() => loadTls(files(node, ca, admin.key))).toThrow(/does not belong to the certificate/);
  });

  it('names the file that is missing or not PEM', () => {
    const p = files(node, ca);
    expect(() => loadTls({ ...p, cert: join(dir, 'nope.pem') })).toThrow(
      /cannot read the certificate file .*nope\.pem: ENOENT/,
    );
    writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
    expect(() => loadTls({ ...p, ca: join(dir, 'junk.pem') })).toThrow(/CA file .*junk\.pem holds no PEM certificate/);
    expect(() => loadTls({ ...p, key: join(dir, 'junk.pem') })).toThrow(
      /private key file .*junk\.pem cannot be parsed/,
    );
  });

  it('rolesOf: known roles from one or several OU values, case-insensitively; others ignored', () => {
    expect(rolesOf('node')).toEqual(['node']);
    expect(rolesOf(['Admin', 'ops'])).toEqual(['admin']);
    expect(rolesOf('client\nnode')).toEqual(['node', 'client']);
    expect(rolesOf(undefined)).toEqual([]);
  });
});

describe('TlsFiles: reloads', () => {
  it('swaps in new files and tells the listeners; keeps the old ones when the new ones are unusable', async () => {
    const p = files(node, ca);
    const results: TlsReload[] = [];
    const t = new TlsFiles(p, { onReload: (r) => results.push(r) });
    const seen: Buffer[] = [];
    t.addIdentityCertificateListener((u) => seen.push(u!.certificate));
    expect(seen).toHaveLength(0); // told the current one on the next tick (grpc-js registers its watcher after)
    await new Promise((r) => process.nextTick(r));
    expect(seen).toHaveLength(1);
    const before = t.material.fingerprint;

    writeFileSync(p.cert, 'half a file');
    expect(t.reload()).toBe(false);
    expect(results.at(-1)).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/holds no PEM certificate/) },
    });
    expect(t.material.fingerprint).toBe(before);
    expect(seen).toHaveLength(1);

    const renewed = await issue(ca, { name: 'n1', role: 'node' });
    writeFileSync(p.cert, renewed.cert);
    writeFileSync(p.key, renewed.key);
    expect(t.reload()).toBe(true);
    expect(t.material.fingerprint).not.toBe(before);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.toString()).toBe(renewed.cert);
    t.close();
  });

  it('watches the files: a changed certificate is picked up without a call', async () => {
    const p = files(node, ca);
    const results: TlsReload[] = [];
    const t = new TlsFiles(p, { watchMs: 20, onReload: (r) => results.push(r) });
    try {
      const renewed = await issue(ca, { name: 'n1', role: 'node' });
      writeFileSync(p.key, renewed.key);
      writeFileSync(p.cert, renewed.cert);
      const end = Date.now() + 5000;
      while (t.material.cert.toString() !== renewed.cert && Date.now() < end)
        await new Promise((r) => setTimeout(r, 20));
      expect(t.material.cert.toString()).toBe(renewed.cert);
    } finally {
      t.close();
    }
  });
});

describe('TlsFiles as grpc-js server credentials', () => {
  it('a server bound with them completes a handshake with a client certificate right after bind', async () => {
    // Regression: the first update reached grpc-js before it watched for it, and the
    // server dropped every connection for "unloaded credentials".
    const p = files(node, ca);
    const client = files(admin, ca);
    const t = new TlsFiles(p);
    const server = new grpc.Server();
    try {
      const port = await new Promise<number>((res, rej) =>
        server.bindAsync('127.0.0.1:0', t.serverCredentials(), (e, port) => (e ? rej(e) : res(port))),
      );
      const alpn = await new Promise<string | false | null>((res, rej) => {
        const s = connect({
          host: '127.0.0.1',
          port,
          ca: readFileSync(client.ca),
          cert: readFileSync(client.cert),
          key: readFileSync(client.key),
          ALPNProtocols: ['h2'],
        });
        s.once('secureConnect', () => {
          res(s.alpnProtocol);
          s.end();
        });
        s.once('error', rej);
      });
      expect(alpn).toBe('h2');
    } finally {
      server.forceShutdown();
      t.close();
    }
  });
});
