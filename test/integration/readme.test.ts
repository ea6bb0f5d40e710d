/**
 * README's tour, typed in order as a new user would: every `sh` block from "A five-minute
 * tour" up to "Running a real cluster", run line after line in one shell (so `C=$(…)`
 * carries to the next line), against `ringkv local` as `npm start` runs it, from a
 * project of its own that has ringkv installed (so `npx ringkv` finds the CLI as it does
 * in the clone). The one thing the test makes real that a reader would not type: the
 * ports, since the test takes free ones rather than 7001-7003 (RINGKV_NODE for the
 * default, and each `--node 127.0.0.1:70NN` moved by as much).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { CLI_ARGS, freeRun, killAll, startLocal } from './local-launcher.js';
import { Client } from '../../src/client/index.js';

const repo = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ringkv-readme-'));
const pids: number[] = [];
afterAll(() => {
  killAll(pids);
  rmSync(dir, { recursive: true, force: true });
});

/** The shell lines of README's tour: its `sh` blocks between the two headings, in order. */
function tourLines(readme: string): string[][] {
  const from = readme.indexOf('## A five-minute tour');
  const to = readme.indexOf('## Running a real cluster');
  if (from < 0 || to < from)
    throw new Error('README has no "A five-minute tour" section before "Running a real cluster"');
  return [...readme.slice(from, to).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) =>
    m[1]!.split('\n').filter((l) => l.trim() !== ''),
  );
}

it('runs every command of the README tour, in order, against a local cluster', async () => {
  const blocks = tourLines(readFileSync(join(repo, 'README.md'), 'utf8'));
  expect(blocks.length).toBeGreaterThanOrEqual(5);
  const base = await freeRun(4, [1000]); // three nodes and the one `local add` starts
  const port = (p: string): string => String(base + Number(p) - 7001);

  // A project of the reader's own, with ringkv installed: `npx ringkv` runs its CLI (from source).
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'tour', private: true }));
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
  writeFileSync(
    join(dir, 'node_modules/.bin/ringkv'),
    `#!/bin/sh\nexec "${process.execPath}" ${CLI_ARGS.map((a) => `"${a}"`).join(' ')} "$@"\n`,
  );
  chmodSync(join(dir, 'node_modules/.bin/ringkv'), 0o755);

  // `npm start`: ringkv local, data in ./data, on the test's ports.
  const launcher = await startLocal(['--base-port', String(base)], pids, dir);

  // One shell, every line echoed before it runs; the first failing line stops it.
  const script = ['set -euo pipefail'];
  for (const line of blocks.flat()) {
    const real = line.replace(/127\.0\.0\.1:(70\d\d)\b/g, (_, p: string) => `127.0.0.1:${port(p)}`);
    script.push(`echo ${JSON.stringify(`$ ${real}`).replace(/\$/g, '\\$').replace(/`/g, '\\`')}`, real);
  }
  const run = spawnSync('bash', ['-c', script.join('\n')], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, RINGKV_NODE: `127.0.0.1:${base}`, CI: '' },
  });
  const transcript = `${run.stdout}\n${run.stderr}`;
  // The pids of the nodes the tour started (n2 again, n4).
  pids.push(...[...transcript.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
  expect(run.status, transcript).toBe(0);

  // What the tour said would happen, did.
  expect(transcript).toMatch(/greeting: 2 siblings/);
  expect(transcript).toContain('n4 is normal: it owns its ranges');
  expect(transcript).toContain('n4 left the cluster and exited');
  expect(transcript).toMatch(/^worker-9$/m);
  expect(transcript).toMatch(/apple[\s\S]*pear/);
  const client = new Client({ nodes: [`127.0.0.1:${base}`] });
  try {
    expect((await client.get('greeting', { r: 3 })).values.map(String)).toEqual(['hey']);
    expect((await client.get('k1', { r: 3 })).values.map(String)).toEqual(['v1']);
  } finally {
    client.close();
  }
  expect(await launcher.stop()).toBe(0);
}, 420_000);
