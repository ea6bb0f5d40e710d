import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../../src/node/config.js';
import { NodeSecurity } from '../../../src/node/security.js';
import { hashToken } from '../../../src/transport/authorize.js';

const dir = mkdtempSync(join(tmpdir(), 'ringkv-security-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const silent = pino({ level: 'silent' });

describe('NodeSecurity: what a node starts with', () => {
  it('refuses a missing or unusable TLS file before anything starts, naming it', () => {
    const config = resolveConfig({ tlsCert: join(dir, 'none.pem'), tlsKey: join(dir, 'none-key.pem'), tlsCa: join(dir, 'ca.pem') }, {});
    expect(() => new NodeSecurity(config, silent)).toThrow(/^TLS: cannot read the certificate file .*none\.pem: ENOENT/);
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
    expect(s.interceptors()).toHaveLength(1);
    writeFileSync(file, '');
    s.reload(); // unusable: the old token stays
    expect(s.rules.adminTokenHash).toEqual(hashToken('first-token-0123456789'));
    writeFileSync(file, 'second-token-0123456789');
    s.reload();
    expect(s.rules.adminTokenHash).toEqual(hashToken('second-token-0123456789'));
  });

  it('checks nothing when nothing is configured: no interceptor on the server', () => {
    expect(new NodeSecurity(resolveConfig({}, {}), silent).interceptors()).toEqual([]);
  });
});
