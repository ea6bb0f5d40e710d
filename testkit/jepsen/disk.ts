/**
 * The disk nemeses' means, as primitives (like slow.ts):
 * - a small disk per node: a tmpfs mounted on its data directory (root), its source named
 *   rkj<harness pid>-<node> so that sweep() finds what a harness killed with -9 left;
 *   filled by a file that takes all its free space but a given amount, and freed;
 * - damage to a stopped node's LevelDB files: its newest log cut short, a table file
 *   removed, or bytes flipped inside records of a table file.
 *
 * A flip lands where a disk's damage can be survived by design: inside a data record's
 * value, or in the last byte of a key that is not a sub-key (a set's element, a map's
 * field: those have no check of their own), in a literal of the block's snappy stream
 * that no later copy repeats (so exactly one stored byte changes). It leaves LevelDB's
 * own framing whole: a flip in a block's entry lengths or compressed copies makes
 * LevelDB's code fail the block or abort the process (docs/limits.md), which no store on
 * this binding can catch.
 *
 * Owns: the rkj* tmpfs mounts and the filler files. Must not: touch a file outside the
 * directories it is given.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSubKey } from '../../src/buckets/index.js';

const PREFIX = 'rkj';
const FILLER = 'jepsen-filler';

function run(cmd: string, args: readonly string[]): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
}

/** Whether a small disk can be made here (root on Linux, tmpfs and fallocate), or why not. */
export function diskSupport(): true | string {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root: mounting a tmpfs needs root';
  if (!run('fallocate', ['--version']).ok) return 'fallocate not found (apt-get install -y util-linux)';
  // Root may still lack the right to mount (a container without CAP_SYS_ADMIN): try one.
  const probe = mkdtempSync(join(tmpdir(), `${PREFIX}${process.pid}-probe-`));
  try {
    const r = run('mount', ['-t', 'tmpfs', '-o', 'size=1m', `${PREFIX}${process.pid}-probe`, probe]);
    if (!r.ok) return `mount -t tmpfs failed: ${r.out}`;
    run('umount', [probe]);
    return true;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Mount a tmpfs of `bytes` on `dir` (which exists), named for this harness and `tag`. */
export function mountSmallDisk(dir: string, bytes: number, tag: string): void {
  const r = run('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, `${PREFIX}${process.pid}-${tag}`, dir]);
  if (!r.ok) throw new Error(`mount -t tmpfs on ${dir} failed: ${r.out}`);
}

/** Unmount it (lazily: a node killed a moment ago may still hold a file there). */
export function unmountSmallDisk(dir: string): void {
  run('umount', ['-l', dir]);
}

/** The rkj* tmpfs mounts, of harness `pid` or of any: [source, mount point]. */
export function diskLeftovers(pid?: number): Array<[string, string]> {
  let lines: string[];
  try {
    lines = readFileSync('/proc/mounts', 'utf8').split('\n');
  } catch {
    return [];
  }
  const out: Array<[string, string]> = [];
  for (const l of lines) {
    const [source, dir, type] = l.split(' ');
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(source ?? '');
    if (type === 'tmpfs' && m !== null && dir !== undefined && (pid === undefined || Number(m[1]) === pid))
      out.push([source!, dir.replace(/\\040/g, ' ')]);
  }
  return out;
}

/**
 * Take all of `dir`'s disk but `leaveBytes` with a filler file (growing one there);
 * returns the bytes left free. With 0, every later write on that disk fails ENOSPC. The
 * node writes meanwhile, so a request for all it saw free may fail: it asks for a little
 * less each time, and a last pass takes what is left.
 */
export function fillDisk(dir: string, leaveBytes: number): number {
  const file = join(dir, FILLER);
  const free = (): number => {
    const st = statfsSync(dir);
    return st.bavail * st.bsize;
  };
  for (let attempt = 0; attempt < 40; attempt++) {
    const take = free() - leaveBytes - attempt * 64 * 1024;
    if (take <= 0) break;
    const size = existsSync(file) ? statSync(file).size : 0;
    run('fallocate', ['-o', String(size), '-l', String(take), file]);
  }
  if (leaveBytes === 0)
    for (let chunk = 1 << 20; chunk >= 4096; chunk >>= 2)
      while (
        run('fallocate', ['-o', String(existsSync(file) ? statSync(file).size : 0), '-l', String(chunk), file]).ok
      );
  return free();
}

/** Remove the filler: the disk's space is back. */
export function freeDisk(dir: string): void {
  rmSync(join(dir, FILLER), { force: true });
}

/** The LevelDB files of a data directory, by kind, oldest first (their numbers). */
function files(db: string, ext: string): string[] {
  if (!existsSync(db)) return [];
  return readdirSync(db)
    .filter((f) => f.endsWith(ext))
    .sort();
}

/** Cut a stopped node's newest LevelDB log at a random point; what it held past the cut is lost. Returns what it did. */
export function truncateNewestLog(db: string, random: () => number): string | undefined {
  const log = files(db, '.log').at(-1);
  if (log === undefined) return undefined;
  const path = join(db, log),
    size = statSync(path).size;
  if (size === 0) return undefined;
  const at = Math.floor(random() * size);
  truncateSync(path, at);
  return `log ${log} cut from ${size} to ${at} bytes`;
}

/** Remove one of a stopped node's table files (not `except`): the database then does not open until repaired. */
export function removeTable(db: string, random: () => number, except?: string): string | undefined {
  const tables = files(db, '.ldb').filter((t) => t !== except);
  if (tables.length === 0) return undefined;
  const t = tables[Math.floor(random() * tables.length)]!;
  const size = statSync(join(db, t)).size;
  rmSync(join(db, t));
  return `table ${t} (${size} bytes) removed`;
}

/** Flip `count` bytes inside data records of one of a stopped node's table files: which table, and what was done. */
export function flipInTable(
  db: string,
  count: number,
  random: () => number,
): { table: string; text: string } | undefined {
  const tables = files(db, '.ldb');
  for (const t of shuffled(tables, random)) {
    const path = join(db, t);
    const buf = readFileSync(path);
    const spots = recordSpots(buf);
    if (spots.length === 0) continue;
    // Half the flips in keys when there are any: they are far fewer than value bytes.
    const keys = spots.filter((x) => x.kind === 'key'),
      values = spots.filter((x) => x.kind === 'value');
    const picked = new Set<number>();
    for (let i = 0; i < count * 4 && picked.size < count; i++) {
      const from = keys.length > 0 && (values.length === 0 || random() < 0.5) ? keys : values;
      picked.add(from[Math.floor(random() * from.length)]!.at);
    }
    const kinds = spots.filter((s) => picked.has(s.at)).map((s) => s.kind);
    for (const spot of spots.filter((x) => picked.has(x.at)))
      buf[spot.at]! ^= spot.mask ?? 1 + Math.floor(random() * 255);
    writeFileSync(path, buf);
    return {
      table: t,
      text: `${picked.size} bytes flipped in table ${t} (${kinds.filter((k) => k === 'value').length} in values, ${kinds.filter((k) => k === 'key').length} in keys)`,
    };
  }
  return undefined;
}

function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function varint(buf: Uint8Array, pos: number): [number, number] {
  let n = 0,
    scale = 1;
  for (;;) {
    const b = buf[pos++]!;
    n += (b & 0x7f) * scale;
    if (b < 0x80) return [n, pos];
    scale *= 128;
  }
}

/** A byte of a table file whose flip changes one byte of one data record: where, and in what. */
interface Spot {
  readonly at: number;
  readonly kind: 'value' | 'key';
  /** The bits a key's flip must take (the key stays in order); a value's: any. */
  readonly mask?: number;
}

const DATA = 0x64;

/** Every spot of a LevelDB table file (format: leveldb's doc/table_format.md) a flip may take. */
function recordSpots(file: Buffer): Spot[] {
  if (
    file.length < 48 ||
    file.readUInt32LE(file.length - 8) !== 0x8b80fb57 ||
    file.readUInt32LE(file.length - 4) !== 0xdb477524
  )
    return [];
  let p = file.length - 48;
  [, p] = varint(file, p); // metaindex offset
  [, p] = varint(file, p); // and size
  const [indexAt, q] = varint(file, p);
  const [indexSize] = varint(file, q);
  const spots: Spot[] = [];
  for (const { value } of entries(blockAt(file, indexAt, indexSize))) {
    const [at, r] = varint(value, 0);
    const [size] = varint(value, r);
    const type = file[at + size];
    const raw = file.subarray(at, at + size);
    if (type === 0) for (const s of blockSpots(raw, (i) => at + i)) spots.push(s);
    else if (type === 1) {
      const { out, literal } = unsnappy(raw);
      for (const s of blockSpots(out, (i) => literal(i))) if (s.at >= 0) spots.push({ ...s, at: at + s.at });
    }
  }
  return spots.filter((s) => s.at >= 0);
}

/** A block's contents, decompressed (its type byte follows it). */
function blockAt(file: Buffer, at: number, size: number): Buffer {
  const raw = file.subarray(at, at + size);
  return file[at + size] === 1 ? unsnappy(raw).out : raw;
}

/** The entries of a block (its restart array at the end). */
function entries(
  block: Buffer,
): Array<{ key: Buffer; keyAt: number; keyDelta: number; value: Buffer; valueAt: number }> {
  const restarts = block.readUInt32LE(block.length - 4);
  const end = block.length - 4 - 4 * restarts;
  const out: Array<{ key: Buffer; keyAt: number; keyDelta: number; value: Buffer; valueAt: number }> = [];
  let last = Buffer.alloc(0);
  for (let p = 0; p < end;) {
    let shared: number, unshared: number, vlen: number;
    [shared, p] = varint(block, p);
    [unshared, p] = varint(block, p);
    [vlen, p] = varint(block, p);
    const key = Buffer.concat([last.subarray(0, shared), block.subarray(p, p + unshared)]);
    out.push({
      key,
      keyAt: p,
      keyDelta: unshared,
      value: block.subarray(p + unshared, p + unshared + vlen),
      valueAt: p + unshared,
    });
    p += unshared + vlen;
    last = key;
  }
  return out;
}

/**
 * The spots of one decompressed block, mapped to the file by `where` (a decompressed
 * offset → the file offset of the stored byte that alone makes it, or -1): every byte of
 * a data record's value, and the last byte of a data key's user key where flipping its
 * low bit keeps the block in order (LevelDB's code asserts that a table is sorted, and
 * would abort the node at the next compaction) and no next entry shares the byte.
 */
function blockSpots(block: Buffer, where: (offset: number) => number): Spot[] {
  const out: Spot[] = [];
  const list = entries(block);
  list.forEach((e, i) => {
    // A put's entry (an internal key's kind byte, the first of its 8-byte trailer, is 1): flipping a deletion's would bring back what it deleted.
    if (e.key[0] !== DATA || e.key.length < 1 + 8 + 1 + 8 || e.key[e.key.length - 8] !== 1) return;
    for (let j = 0; j < e.value.length; j++) out.push({ at: where(e.valueAt + j), kind: 'value' });
    // A sub-key's path has no check of its own (it shares its parent's token): docs/limits.md.
    if (isSubKey(e.key.subarray(9, e.key.length - 8))) return;
    const prev = list[i - 1],
      next = list[i + 1];
    const last = e.key.length - 9; // the user key's last byte, in the full key
    const inDelta = e.keyAt + e.keyDelta - 9; // and in the block
    if (prev === undefined || next === undefined || inDelta < e.keyAt || sharedLength(e.key, next.key) > last) return;
    const user = Buffer.from(e.key.subarray(0, e.key.length - 8));
    user[last]! ^= 1;
    if (
      Buffer.compare(prev.key.subarray(0, prev.key.length - 8), user) < 0 &&
      Buffer.compare(user, next.key.subarray(0, next.key.length - 8)) < 0
    )
      out.push({ at: where(inDelta), kind: 'key', mask: 1 });
  });
  return out;
}

/** How many leading bytes `a` and `b` share. */
function sharedLength(a: Buffer, b: Buffer): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/**
 * Snappy-decompress a block, with a map from each output byte to the input byte of the
 * literal that wrote it, when that output byte is copied nowhere later (-1 otherwise):
 * flipping that input byte changes exactly that one output byte.
 */
function unsnappy(input: Buffer): { out: Buffer; literal: (offset: number) => number } {
  let [len, p] = varint(input, 0);
  const out = Buffer.alloc(len);
  const from = new Int32Array(len).fill(-1);
  const copied = new Uint8Array(len);
  let o = 0;
  while (p < input.length && o < len) {
    const tag = input[p++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let i = 0; i < bytes; i++) n |= input[p + i]! << (8 * i);
        p += bytes;
      }
      n += 1;
      for (let i = 0; i < n; i++) ((from[o + i] = p + i), (out[o + i] = input[p + i]!));
      p += n;
      o += n;
      continue;
    }
    let n: number, offset: number;
    if (kind === 1) ((n = 4 + ((tag >> 2) & 7)), (offset = ((tag >> 5) << 8) | input[p++]!));
    else if (kind === 2) ((n = (tag >> 2) + 1), (offset = input.readUInt16LE(p)), (p += 2));
    else ((n = (tag >> 2) + 1), (offset = input.readUInt32LE(p)), (p += 4));
    for (let i = 0; i < n; i++) {
      copied[o - offset + i] = 1;
      out[o + i] = out[o - offset + i]!;
    }
    o += n;
  }
  len = o;
  return { out: out.subarray(0, len), literal: (i) => (copied[i] === 1 ? -1 : from[i]!) };
}
