/**
 * The engines every shared suite runs against: LevelDB in a fresh temporary directory,
 * and memory. Each `make()` gives a new, empty engine; `cleanup()` removes what the
 * suite created.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LevelEngine, MemoryEngine } from '../../../src/storage/index.js';
import type { Engine } from '../../../src/storage/index.js';

export interface EngineKind {
  readonly name: string;
  make(): Engine;
  /** Remove the directories made so far. */
  cleanup(): void;
}

export function levelKind(): EngineKind {
  const dirs: string[] = [];
  return {
    name: 'leveldb',
    make() {
      const dir = mkdtempSync(join(tmpdir(), 'ringkv-test-'));
      dirs.push(dir);
      return new LevelEngine(join(dir, 'db'));
    },
    cleanup() {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

export function memoryKind(): EngineKind {
  return { name: 'memory', make: () => new MemoryEngine(), cleanup() {} };
}

export const ENGINE_KINDS: ReadonlyArray<() => EngineKind> = [levelKind, memoryKind];

/** An engine that delegates to `inner` except for the methods given (fault and probe injection). */
export function wrapEngine(inner: Engine, overrides: Partial<Engine>): Engine {
  return {
    kind: inner.kind,
    open: () => inner.open(),
    close: () => inner.close(),
    get: (k) => inner.get(k),
    getMany: (k) => inner.getMany(k),
    write: (ops, sync) => inner.write(ops, sync),
    iterator: (gte, lt) => inner.iterator(gte, lt),
    keyIterator: (gte, lt) => inner.keyIterator(gte, lt),
    approximateSize: (gte, lt) => inner.approximateSize(gte, lt),
    ...overrides,
  };
}

/** Every key the engine holds under one prefix byte (an index: 't', 'x', 'p', ...). */
export async function keysUnder(engine: Engine, prefix: number): Promise<Buffer[]> {
  const it = engine.keyIterator(Buffer.from([prefix]), Buffer.from([prefix + 1]));
  const out: Buffer[] = [];
  for (let ks = await it.nextv(100); ks.length > 0; ks = await it.nextv(100)) out.push(...ks);
  await it.close();
  return out;
}
