/**
 * `ringkv local --tls`: the launcher makes a development CA and certificates in
 * <data-dir>/certs, runs its nodes with TLS, prints commands that carry the right flags,
 * and `local add` (another process) issues the new node's certificate and follows its
 * join over TLS with the admin certificate the launcher names.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { freeRun, killAll, startLocal } from './local-launcher.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const root = mkdtempSync(join(tmpdir(), 'ringkv-local-tls-'));
const pids: number[] = [];
afterAll(() => {
  killAll(pids);
  rmSync(root, { recursive: true, force: true });
});

it('runs the local cluster over TLS, with certificates it made, and adds a node to it', async () => {
  const base = await freeRun(3);
  const launcher = await startLocal(
    ['--tls', '--nodes', '2', '--base-port', String(base), '--http-base-port', '0', '--data-dir', root],
    pids,
  );
  const out = launcher.out();

  const certs = join(root, 'certs');
  for (const f of ['ca.pem', 'ca-key.pem', 'n1.pem', 'n2-key.pem', 'admin.pem', 'client.pem'])
    expect(existsSync(join(certs, f))).toBe(true);
  expect(out).toContain(`--tls-ca ${join(certs, 'ca.pem')} --tls-cert ${join(certs, 'client.pem')}`);

  const address = `127.0.0.1:${base}`;
  const c = new Client({
    nodes: [address],
    tls: { ca: join(certs, 'ca.pem'), cert: join(certs, 'client.pem'), key: join(certs, 'client-key.pem') },
  });
  const plain = new Client({ nodes: [address], tokenAware: false, deadlineMs: 2000 });
  try {
    await c.put('k', 'tls');
    expect((await c.get('k')).values.map(String)).toEqual(['tls']);
    await expect(plain.get('k')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  } finally {
    c.close();
    plain.close();
  }

  // The CLI, as the launcher printed it.
  const run = promisify(execFile);
  const status = await run(process.execPath, [
    '--import',
    'tsx',
    MAIN,
    'status',
    '--node',
    address,
    '--tls-ca',
    join(certs, 'ca.pem'),
    '--tls-cert',
    join(certs, 'admin.pem'),
    '--tls-key',
    join(certs, 'admin-key.pem'),
  ]);
  expect(status.stdout).toMatch(/n1[\s\S]*n2/);
  // No warning that grpc-js gives TLS an IP address as the ServerName (DEP0123), here or in the nodes.
  expect(status.stderr).toBe('');
  // local add: its own process, no TLS flags given; it finds them through the launcher.
  const add = await run(process.execPath, ['--import', 'tsx', MAIN, 'local', 'add', '--data-dir', root], {
    timeout: 90_000,
  });
  expect(add.stdout).toMatch(/n3 is normal/);
  expect(existsSync(join(certs, 'n3.pem'))).toBe(true);
  expect(add.stderr).not.toContain('DEP0123');
  for (const id of ['n1', 'n2', 'n3'])
    expect(readFileSync(join(root, id, 'node.log'), 'utf8')).not.toContain('DEP0123');

  expect(await launcher.stop()).toBe(0);
}, 150_000);
