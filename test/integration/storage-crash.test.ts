/**
 * Durability, on real processes: a child writes and prints each acknowledged key, is
 * SIGKILLed mid-stream, and every key it acknowledged must be there when the database
 * is reopened — in both durability modes. (A power cut is not simulated: see
 * docs/storage.md, "Durability".)
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/storage/index.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Start the writer; resolve with the keys it acknowledged once it has acked `acks`, then kill it. */
function writeThenKill(dir: string, durability: string, acks: number): Promise<string[]> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, '../fixtures/crash-writer.ts'), dir, durability],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    const acked: string[] = [];
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
      if (acked.length >= acks && child.signalCode === null) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`writer exited with ${code ?? signal} after ${acked.length} acks, before it was killed`));
    });
    child.on('error', reject);
  });
}

describe('durability across a process crash', () => {
  for (const durability of ['default', 'sync'] as const) {
    it(`keeps every acknowledged write after SIGKILL (${durability})`, { timeout: 90_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ringkv-crash-'));
      dirs.push(dir);
      const acked = await writeThenKill(join(dir, 'db'), durability, durability === 'sync' ? 1_500 : 5_000);
      expect(acked.length).toBeGreaterThanOrEqual(durability === 'sync' ? 1_500 : 5_000);
      const store = await Store.open({ path: join(dir, 'db') });
      const missing: string[] = [];
      for (const key of acked) {
        const r = await store.get(key);
        if (r.values.length !== 1 || r.values[0]!.toString() !== `value of ${key}`) missing.push(key);
      }
      await store.close();
      expect(missing).toEqual([]);
    });
  }
});

describe('group commit', () => {
  it('in sync mode, concurrent writes share fsyncs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringkv-sync-'));
    dirs.push(dir);
    const store = await Store.open({ path: join(dir, 'db'), durability: 'sync' });
    await Promise.all(Array.from({ length: 200 }, (_, i) => store.put(`k${i}`, Buffer.from('v'))));
    const { writes, batches } = store.writeStats;
    expect(writes).toBe(200);
    expect(batches).toBeLessThan(100); // 200 writes, far fewer fsyncs
    await store.close();
  });
});
