/**
 * The `ringkv` command loads what the command it runs needs, not everything: `--version`
 * and `--help` load no gRPC at all, and a client command (get, status, health) loads the
 * client but not the node (LevelDB, the logger, the server). Each run's module list comes
 * from a loader hook (import-hook.mjs); the timings are in docs/reads-and-writes.md#cli.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const HOOK = join(import.meta.dirname, 'import-hook.mjs');
const dir = mkdtempSync(join(tmpdir(), 'ringkv-imports-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
/** The modules `ringkv ...args` loaded: node_modules packages by name, ringkv's own files by path under src/. */
function loaded(...args: string[]): { packages: Set<string>; files: string[] } {
  const log = join(dir, `run-${runs++}.log`);
  const r = spawnSync(process.execPath, ['--import', HOOK, '--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, RINGKV_IMPORT_LOG: log },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(r.error).toBeUndefined();
  const urls = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u !== '');
  const packages = new Set(
    urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p): p is string => p !== undefined),
  );
  const files = urls.map((u) => /\/src\/(.+)$/.exec(u)?.[1]).filter((f): f is string => f !== undefined);
  return { packages, files };
}

const NODE_ONLY = ['classic-level', 'level', 'pino', 'prom-client', 'grpc-health-check', '@grpc/reflection'];
/** The node's own heavy modules: the node, its store, its coordinator, its gossiper. */
const NODE_FILES = /^(node\/node|storage\/store|replication\/coordinator|membership\/gossiper)\.ts$/;

describe('what a ringkv command loads', () => {
  it('--version and --help load no gRPC, no LevelDB and no logger', () => {
    for (const args of [['--version'], ['--help'], ['get', '--help']]) {
      const { packages, files } = loaded(...args);
      expect(
        [...packages].filter((p) => p.startsWith('@grpc/') || p === 'protobufjs' || NODE_ONLY.includes(p)),
        args.join(' '),
      ).toEqual([]);
      expect(
        files.filter((f) => NODE_FILES.test(f) || f.startsWith('client/')),
        args.join(' '),
      ).toEqual([]);
    }
  }, 60_000);

  it('a client command loads the client, not the node', () => {
    for (const args of [
      ['get', 'k', '--node', '127.0.0.1:1', '--deadline-ms', '200'],
      ['status', '--node', '127.0.0.1:1'],
      ['health', '--node', '127.0.0.1:1', '--deadline-ms', '200'],
    ]) {
      const { packages, files } = loaded(...args);
      expect(packages.has('@grpc/grpc-js'), args.join(' ')).toBe(true);
      expect(
        [...packages].filter((p) => NODE_ONLY.includes(p)),
        args.join(' '),
      ).toEqual([]);
      expect(
        files.filter((f) => NODE_FILES.test(f)),
        args.join(' '),
      ).toEqual([]);
    }
  }, 60_000);
});
