/**
 * The wire's rule between versions (docs/operations.md#upgrades): proto changes are
 * append-only. Every message, field (number, name, type, label), enum value and method of
 * every version of proto/ since the last break (WIRE_BREAK) is still there, the same,
 * in the current one (or its number is `reserved`), so that nodes and clients of mixed
 * versions in one cluster read each other. A field renamed, renumbered or retyped, a
 * method's types changed, anything removed: this test names it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../..');
/** The last commit whose wire later versions do not read (docs/operations.md#upgrades). */
const WIRE_BREAK = '613fb59';

function protoFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? protoFiles(join(dir, e.name)) : e.name.endsWith('.proto') ? [join(dir, e.name)] : [],
  );
}

function load(dir: string): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(dir, 'proto', target));
  root.loadSync(
    protoFiles(join(dir, 'proto')).map((f) => relative(join(dir, 'proto'), f)),
    { keepCase: true },
  );
  root.resolveAll();
  return root;
}

function* walk(ns: protobuf.NamespaceBase): Generator<protobuf.ReflectionObject> {
  for (const o of ns.nestedArray) {
    yield o;
    if (o instanceof protobuf.Namespace || o instanceof protobuf.Type || o instanceof protobuf.Service)
      yield* walk(o as protobuf.NamespaceBase);
  }
}

/** `reserved N` or `reserved A to B` (the parser keeps both ends; its own isReservedId takes the end as exclusive). */
function reservedId(t: protobuf.Type, id: number): boolean {
  return (t.reserved ?? []).some((r) => typeof r !== 'string' && r[0]! <= id && id <= r[1]!);
}

/** What `next` breaks of `prev`; [] when next only adds. */
export function breaks(prev: protobuf.Root, next: protobuf.Root): string[] {
  const out: string[] = [];
  for (const o of walk(prev)) {
    const name = o.fullName.slice(1);
    const now = next.lookup(o.fullName);
    if (o instanceof protobuf.Type) {
      if (!(now instanceof protobuf.Type)) {
        out.push(`message ${name} is gone`);
        continue;
      }
      for (const f of o.fieldsArray) {
        const g = now.fieldsById[f.id];
        if (g === undefined) {
          if (!reservedId(now, f.id))
            out.push(`${name}: field ${f.id} (${f.name}) removed without reserving its number`);
          continue;
        }
        if (g.name !== f.name) out.push(`${name}: field ${f.id} renamed ${f.name} -> ${g.name}`);
        const type = (x: protobuf.Field): string =>
          `${x.repeated ? 'repeated ' : ''}${x instanceof protobuf.MapField ? `map<${x.keyType},` : ''}${x.resolvedType?.fullName ?? x.type}`;
        if (type(g) !== type(f)) out.push(`${name}.${f.name} (${f.id}): ${type(f)} -> ${type(g)}`);
      }
    } else if (o instanceof protobuf.Enum) {
      if (!(now instanceof protobuf.Enum)) {
        out.push(`enum ${name} is gone`);
        continue;
      }
      for (const [k, v] of Object.entries(o.values))
        if (now.values[k] !== v) out.push(`${name}.${k}: ${v} -> ${now.values[k] ?? 'gone'}`);
    } else if (o instanceof protobuf.Service) {
      if (!(now instanceof protobuf.Service)) {
        out.push(`service ${name} is gone`);
        continue;
      }
      for (const m of o.methodsArray) {
        const n = now.methods[m.name];
        const sig = (x: protobuf.Method): string =>
          `${x.requestStream ? 'stream ' : ''}${x.resolvedRequestType?.fullName}) returns (${x.responseStream ? 'stream ' : ''}${x.resolvedResponseType?.fullName}`;
        if (n === undefined) out.push(`${name}.${m.name} is gone`);
        else if (sig(n) !== sig(m)) out.push(`${name}.${m.name}: (${sig(m)}) -> (${sig(n)})`);
      }
    }
  }
  return out;
}

describe('proto changes are append-only', () => {
  const current = load(ROOT);
  // The last break: 613fb59 replaced the unary Replica calls with one stream per peer.
  // Versions before it do not interoperate with later ones; since, the wire only grows.
  const commits = execFileSync('git', ['log', '--format=%H', `${WIRE_BREAK}..HEAD`, '--', 'proto'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean);

  it(`every version of proto/ since the last break (${commits.length} commits) is read by the current one`, () => {
    expect(commits.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const c of commits) {
      const dir = mkdtempSync(join(tmpdir(), 'ringkv-proto-'));
      try {
        execFileSync('sh', ['-c', `git archive ${c} proto | tar -x -C ${dir}`], { cwd: ROOT });
        for (const b of breaks(load(dir), current)) found.push(`${c.slice(0, 7)}: ${b}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(found).toEqual([]);
  });

  it('names what a change breaks: a field renamed, renumbered or retyped, a method changed, anything removed', () => {
    const parse = (text: string): protobuf.Root => {
      const r = protobuf.parse(`syntax = "proto3"; package t; ${text}`, { keepCase: true }).root;
      r.resolveAll();
      return r;
    };
    const base = parse(
      'message A { string x = 1; uint32 y = 2; } enum E { E_0 = 0; E_1 = 1; } service S { rpc Get(A) returns (A); }',
    );
    expect(
      breaks(
        base,
        parse(
          'message A { string x = 1; uint32 y = 2; bytes z = 3; } enum E { E_0 = 0; E_1 = 1; E_2 = 2; } service S { rpc Get(A) returns (A); rpc Put(A) returns (A); }',
        ),
      ),
    ).toEqual([]);
    expect(
      breaks(
        base,
        parse(
          'message A { string x = 1; reserved 2; } enum E { E_0 = 0; E_1 = 1; } service S { rpc Get(A) returns (A); }',
        ),
      ),
    ).toEqual([]);
    expect(
      breaks(
        base,
        parse('message A { string x = 1; } enum E { E_0 = 0; E_1 = 1; } service S { rpc Get(A) returns (A); }'),
      ),
    ).toEqual(['t.A: field 2 (y) removed without reserving its number']);
    expect(
      breaks(
        base,
        parse(
          'message A { string x = 1; uint32 yy = 2; } enum E { E_0 = 0; E_1 = 1; } service S { rpc Get(A) returns (A); }',
        ),
      ),
    ).toEqual(['t.A: field 2 renamed y -> yy']);
    expect(
      breaks(
        base,
        parse(
          'message A { string x = 1; uint64 y = 2; } enum E { E_0 = 0; E_1 = 1; } service S { rpc Get(A) returns (A); }',
        ),
      ),
    ).toEqual(['t.A.y (2): uint32 -> uint64']);
    expect(
      breaks(
        base,
        parse(
          'message A { string x = 1; uint32 y = 2; } enum E { E_0 = 0; E_1 = 2; } service S { rpc Get(A) returns (stream A); }',
        ),
      ),
    ).toEqual(['t.E.E_1: 1 -> 2', 't.S.Get: (.t.A) returns (.t.A) -> (.t.A) returns (stream .t.A)']);
  });
});
