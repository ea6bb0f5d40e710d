/**
 * npm run soak:storage — crash the store again and again under mixed writes, and check
 * after every crash that nothing acknowledged was lost. Not part of `npm test` (it runs
 * for minutes); the CI crash test (test/integration/storage-crash.test.ts) is its short
 * form for plain puts.
 *
 * Each cycle starts test/fixtures/soak-writer.ts on the same data directory, SIGKILLs it
 * at a random moment, reopens the store here and checks:
 *  - every record decodes (no corrupt bytes after a crash);
 *  - every value held is one some writer meant to write;
 *  - every acknowledged put is still held, or some write's read saw it (and so may have
 *    superseded it). A put that vanished with no reader having seen it is a lost write.
 *
 * Flags: --cycles N (default 30), --sync (durability 'sync'), --seconds S (most per cycle, default 3).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../src/storage/index.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) =>
  args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback;
const cycles = flag('--cycles', 30);
const maxSeconds = flag('--seconds', 3);
const durability = args.includes('--sync') ? 'sync' : 'default';
const root = mkdtempSync(join(tmpdir(), 'ringkv-soak-'));
const dir = join(root, 'db');
const fixture = join(import.meta.dirname, '../test/fixtures/soak-writer.ts');

const intended = new Set<string>();
const seen = new Set<string>();
const ackedPuts = new Map<string, string>(); // id → key
const keyOf = new Map<string, string>();

/** Run one writer until a random moment; return how many writes it acknowledged. */
function cycle(n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fixture, dir, durability, String(maxSeconds * 1000 + 5000), `c${n}`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let buffered = '',
      acks = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [kind, id, a, b] = line.split(' ');
        if (kind === 'intent') {
          intended.add(id!);
          keyOf.set(id!, a!);
          for (const s of (b ?? '').split(',')) if (s) seen.add(s);
        } else if (kind === 'ack') {
          acks++;
          if (a === 'put') ackedPuts.set(id!, keyOf.get(id!)!);
        }
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 300 + Math.random() * maxSeconds * 1000);
    child.on('exit', () => (clearTimeout(timer), resolve(acks)));
    child.on('error', reject);
  });
}

async function check(): Promise<string[]> {
  const problems: string[] = [];
  const store = await Store.open({
    path: dir,
    logger: { warn: () => {}, error: (o, m) => problems.push(`${m} ${JSON.stringify(o)}`) },
  });
  const held = new Map<string, Set<string>>();
  for await (const batch of store.ranges.scan({ start: 0n, end: 0n })) {
    for (const k of batch.corrupt) problems.push(`corrupt record for ${k}`);
    for (const e of batch.entries) {
      const values = (await store.get(e.key)).values.map(String);
      for (const v of values) if (!intended.has(v)) problems.push(`${e.key}: value ${v} that nobody wrote`);
      held.set(e.key.toString(), new Set(values));
    }
  }
  for (const [id, key] of ackedPuts)
    if (!held.get(key)?.has(id) && !seen.has(id)) problems.push(`lost: acknowledged put ${id} of ${key}`);
  await store.close(); // a clean close between cycles exercises both restart paths
  return problems;
}

try {
  console.log(`soak: ${cycles} crash cycles, durability '${durability}', up to ${maxSeconds} s each`);
  let totalAcks = 0;
  for (let n = 0; n < cycles; n++) {
    totalAcks += await cycle(n);
    const problems = await check();
    if (problems.length > 0) {
      console.error(`cycle ${n}: ${problems.length} problems\n${problems.slice(0, 20).join('\n')}`);
      process.exitCode = 1;
      break;
    }
    if ((n + 1) % 5 === 0)
      console.log(`  ${n + 1} cycles, ${totalAcks} writes acknowledged, ${ackedPuts.size} puts checked: nothing lost`);
  }
  if (!process.exitCode) console.log(`ok: ${cycles} crashes, ${totalAcks} acknowledged writes, nothing lost`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
