import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeCerts, type CertsOptions } from '../../../src/cli/dev-certs.js';
import { setCredentials, cliSecurity } from '../../../src/cli/credential-flags.js';

const root = mkdtempSync(join(tmpdir(), 'ringkv-certs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const opts = (dir: string, over: Partial<CertsOptions> = {}): CertsOptions => ({
  dir,
  nodes: ['n1'],
  hosts: ['127.0.0.1', 'db1.example.com'],
  admins: ['admin'],
  clients: ['app'],
  days: 30,
  force: false,
  ...over,
});

describe('ringkv certs', () => {
  it('makes a CA and one certificate per name, roles in the OU, hosts in the SAN, keys 0600; a second run keeps them and adds new names', async () => {
    const dir = join(root, 'a');
    const first = await makeCerts(opts(dir));
    expect(first.map((w) => [w.name, w.role, w.made])).toEqual([
      ['ca', 'ca', true],
      ['n1', 'node', true],
      ['admin', 'admin', true],
      ['app', 'client', true],
    ]);
    const n1 = new X509Certificate(readFileSync(join(dir, 'n1.pem')));
    expect(n1.subject).toMatch(/OU=node/);
    expect(n1.subjectAltName).toBe('IP Address:127.0.0.1, DNS:db1.example.com');
    expect(n1.checkIssued(new X509Certificate(readFileSync(join(dir, 'ca.pem'))))).toBe(true);
    expect(statSync(join(dir, 'n1-key.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'ca-key.pem')).mode & 0o777).toBe(0o600);
    const before = readFileSync(join(dir, 'n1.pem'), 'utf8');
    const second = await makeCerts(opts(dir, { nodes: ['n1', 'n2'] }));
    expect(second.filter((w) => w.made).map((w) => w.name)).toEqual(['n2']);
    expect(readFileSync(join(dir, 'n1.pem'), 'utf8')).toBe(before);
    expect(
      new X509Certificate(readFileSync(join(dir, 'n2.pem'))).checkIssued(
        new X509Certificate(readFileSync(join(dir, 'ca.pem'))),
      ),
    ).toBe(true);
  });

  it('refuses bad names, a name used twice, and half a CA, saying what to do', async () => {
    await expect(makeCerts(opts(join(root, 'b'), { nodes: ['n 1'] }))).rejects.toThrow(
      /"n 1" cannot name a certificate/,
    );
    await expect(makeCerts(opts(join(root, 'b'), { nodes: ['x'], clients: ['x'] }))).rejects.toThrow(
      /"x" is named twice/,
    );
    await expect(makeCerts(opts(join(root, 'b'), { nodes: ['ca'] }))).rejects.toThrow(/is named twice \(or is "ca"\)/);
    const dir = join(root, 'c');
    await makeCerts(opts(dir));
    unlinkSync(join(dir, 'ca-key.pem'));
    await expect(makeCerts(opts(dir))).rejects.toThrow(/holds only one of ca\.pem and ca-key\.pem/);
  });
});

describe('the CLI credential flags', () => {
  it('take flags over the environment, and refuse a certificate without its key or without a CA', () => {
    setCredentials({ tlsCa: 'ca.pem' }, { RINGKV_TLS_CERT: 'c.pem', RINGKV_TLS_KEY: 'k.pem' });
    expect(cliSecurity()).toEqual({ tls: { ca: 'ca.pem', cert: 'c.pem', key: 'k.pem' } });
    expect(() => setCredentials({ tlsCert: 'c.pem' }, {})).toThrow(/give both --tls-cert and --tls-key/);
    expect(() => setCredentials({ tlsCert: 'c.pem', tlsKey: 'k.pem' }, {})).toThrow(/--tls-cert needs --tls-ca/);
    expect(() => setCredentials({ adminTokenFile: join(root, 'missing.token') }, {})).toThrow(
      /cannot read the admin token file .*ENOENT/,
    );
    setCredentials({}, {});
    expect(cliSecurity()).toEqual({});
  });
});
