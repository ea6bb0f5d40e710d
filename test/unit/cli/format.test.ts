import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatEndpoints,
  formatGet,
  formatRing,
  formatStatus,
  showValue,
} from '../../../src/cli/format.js';

const member = (id: string, zone: string, over: object = {}) => ({
  id,
  address: `127.0.0.1:700${id.slice(1)}`,
  zone,
  rack: 'r1',
  status: 'normal',
  up: true,
  generation: 1,
  heartbeat: 5,
  tokens: 64,
  ownership: 0.6,
  loadBytes: 2048,
  weight: 1,
  phi: 0.2,
  hints: 0,
  progress: '',
  stopping: false,
  disk: 'ok',
  diskFreeBytes: 10 * 1024 ** 3,
  diskTotalBytes: 100 * 1024 ** 3,
  ...over,
});

describe('status and ring output', () => {
  it('prints nodetool-style rows per zone: state code, address, load, tokens, effective ownership, id, rack', () => {
    const text = formatStatus({
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: [
        member('n1', 'z1', { hints: 12 }),
        member('n2', 'z2', { up: false, stopping: true }),
        member('n3', 'z1', { status: 'joining', tokens: 0, ownership: 0 }),
        member('n4', 'z2', { status: 'leaving' }),
      ],
      counters: { puts: 3, readRepairs: 1 },
    });
    expect(text).toContain('Cluster: c (as seen by n1');
    expect(text).toContain('Zone: z1');
    expect(text).toMatch(/^UN {2}127\.0\.0\.1:7001 {2}2\.00 KiB {2}12 {5}64 {6}60\.0% +n1 +r1$/m);
    expect(text).not.toContain('Counters'); // only with --verbose
    expect(text).toMatch(/^DN {2}127\.0\.0\.1:7002 .*60\.0% \(stopping\) +n2/m); // a drain announced
    expect(text).toMatch(/^UJ {2}127\.0\.0\.1:7003 .* \? +n3/m); // a joiner owns nothing yet
    expect(text).toMatch(/^UL {2}127\.0\.0\.1:7004/m);
    expect(text.indexOf('Zone: z1')).toBeLessThan(text.indexOf('Zone: z2'));
    expect(text).not.toContain('Disk');
  });

  it('names each member whose disk refuses writes, with its free space, under the tables', () => {
    const text = formatStatus({
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: [
        member('n1', 'a'),
        member('n2', 'a', { disk: 'low', diskFreeBytes: 60 * 1024 ** 2, diskTotalBytes: 64 * 1024 ** 2 }),
        member('n3', 'a', { disk: 'failed', diskFreeBytes: 0 }),
      ],
      counters: {},
    });
    expect(text).toContain(
      '\nDisk: n2 has 60.00 MiB free of 64.00 MiB, below its floor (--min-free-disk): it takes no new writes; other replicas take them.\n',
    );
    expect(text).toContain(
      '\nDisk: n3 had a write fail for want of space (0 B free of 100.00 GiB): it takes no new writes until space is back.\nSee docs/operations.md#a-full-disk',
    );
  });

  it("lines up the columns of every zone's table: widths come from all rows, not each zone's", () => {
    const text = formatStatus({
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: [
        member('n1', 'a', { loadBytes: 0 }),
        member('n2', 'b', { address: 'db-host-long-name.example:7002', loadBytes: 5 * 1024 ** 3, hints: 123456 }),
      ],
      counters: {},
    });
    const rows = text.split('\n').filter((l) => /^(--|U[NJLTR]|D[NJLTR]) /.test(l));
    expect(rows).toHaveLength(4); // a header and a member per zone
    for (const col of ['Load', 'Hints', 'Tokens', 'Owns', 'Host ID', 'Rack']) {
      const at = rows[0]!.indexOf(col);
      expect(rows[2]!.indexOf(col), col).toBe(at);
    }
    const starts = (l: string) => [...l.matchAll(/(?<=  )\S/g)].map((m) => m.index);
    expect(starts(rows[1]!)).toEqual(starts(rows[3]!));
  });

  it("shows a joiner's streaming progress, and lists members that left or were removed below the table", () => {
    const text = formatStatus({
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: [
        member('n1', 'z1'),
        member('n3', 'z1', { status: 'joining', progress: '12/30' }),
        member('n5', 'z1', { status: 'left', up: false }),
        member('n6', 'z1', { status: 'removed', up: false }),
      ],
      counters: {},
    });
    expect(text).toMatch(/^UJ {2}127\.0\.0\.1:7003 .* \? \(streaming 12\/30 ranges\) +n3/m);
    expect(text).not.toMatch(/^D[TR] /m);
    expect(text).toContain('Left or removed: n5 (left), n6 (removed)');
  });

  it('says why token counts differ when they do (inherited from nodes that left), and nothing when they do not', () => {
    const reply = (tokens: number[]) => ({
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: tokens.map((t, i) => member(`n${i + 1}`, 'z1', { tokens: t })),
      counters: {},
    });
    expect(formatStatus(reply([85, 85, 86]))).toContain(
      'Tokens differ: a node holds the tokens it claimed when it joined (--tokens, times its --weight) and those it inherited from nodes that left (docs/ring.md).',
    );
    expect(formatStatus(reply([64, 64, 64]))).not.toContain('Tokens differ');
  });

  it("prints the answering node's counters below the table only when verbose (--verbose)", () => {
    const reply = {
      clusterName: 'c',
      nodeId: 'n1',
      replicas: 3,
      members: [member('n1', 'z1'), member('n5', 'z1', { status: 'left', up: false })],
      counters: { puts: 3, readRepairs: 1 },
    };
    const plain = formatStatus(reply);
    expect(plain).not.toMatch(/Counters|puts=|readRepairs=/);
    expect(plain.endsWith('Left or removed: n5 (left)')).toBe(true);
    const verbose = formatStatus(reply, { verbose: true });
    expect(verbose).toBe(`${plain}\n\nCounters of n1 since it started:\n  puts=3 readRepairs=1`);
    expect(formatStatus({ ...reply, counters: {} }, { verbose: true })).toBe(plain);
  });

  it('prints ranges with their replicas, and sizes in binary units', () => {
    expect(
      formatRing({ replicas: 2, ranges: [{ start: 'ff', end: '0a', replicas: ['n1', 'n2'] }], pending: [] }),
    ).toMatch(/ff +0a +n1,n2$/m);
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.00 GiB');
  });

  it('get: one value plainly, siblings numbered with what to do, the context in base64; binary values as hex', () => {
    const ctx = Buffer.from([1, 2, 3]);
    expect(formatGet('k', { values: [Buffer.from('v')], context: ctx, found: true })).toBe('v\ncontext: AQID');
    expect(formatGet('k', { values: [Buffer.from('a'), Buffer.from('b')], context: ctx, found: true })).toBe(
      'k: 2 siblings (concurrent writes); put with the context to resolve them\n  [1] a\n  [2] b\ncontext: AQID',
    );
    expect(formatGet('k', { values: [], context: ctx, found: false })).toBe('k: not found\ncontext: AQID');
    expect(showValue(Buffer.from([0, 255]))).toBe('0x00ff');
    expect(showValue(Buffer.from('héllo'))).toBe('héllo');
  });

  it('getendpoints: each replica, up or down, and where writes for it go now', () => {
    const ep = (id: string, up = true, hintFor = '') => ({
      id,
      address: `127.0.0.1:700${id.slice(1)}`,
      zone: 'z',
      up,
      hintFor,
    });
    const text = formatEndpoints('k', {
      token: '00ff',
      replicas: 3,
      preferenceList: [ep('n1'), ep('n2', false), ep('n3', false)],
      targets: [ep('n1'), ep('n4', true, 'n2')],
    });
    expect(text).toContain('key k: token 00ff, N=3');
    expect(text).toMatch(/^n1 +127\.0\.0\.1:7001 +z +up +n1$/m);
    expect(text).toMatch(/^n2 +127\.0\.0\.1:7002 +z +down +n4 \(127\.0\.0\.1:7004, fallback keeping a hint\)$/m);
    expect(text).toMatch(/^n3 .* down +nowhere: no fallback is up$/m);
  });
});

describe('transfers output', () => {
  it('a line per pull with rate and ETA, active ranges as rows, waiting ones counted', async () => {
    const { formatTransfers } = await import('../../../src/cli/follow.js');
    const range = (state: string, share: number, keys = 0, bytes = 0) => ({
      start: '00000000000000aa',
      end: '00000000000000bb',
      state,
      peer: state === 'waiting' ? '' : 'n1',
      keys,
      bytes,
      share,
      fallbackSource: false,
      error: '',
    });
    const text = formatTransfers(
      [
        {
          nodeId: 'n1',
          movements: ['n4 is joining'],
          pulls: [],
          outgoing: [{ ...range('active', 0, 10, 1024) }],
          drive: null,
          streamBytesPerSecond: 0,
        },
        {
          nodeId: 'n4',
          movements: ['n4 is joining'],
          pulls: [
            {
              move: 'join-n4-x',
              requestedBy: 'n4',
              startedAtMs: 0,
              finishedAtMs: 0,
              ranges: [range('done', 0.25, 100, 10_240), range('active', 0.25, 10, 1024), range('waiting', 0.5)],
            },
          ],
          outgoing: [],
          drive: null,
          streamBytesPerSecond: 0,
        },
      ],
      ['n9'],
      10_000,
    );
    expect(text).toContain('In progress: n4 is joining');
    expect(text).toContain('n4 pulls for its join: 1/3 ranges, 110 keys, 11.00 KiB at 1.10 KiB/s, ETA 30 s');
    expect(text).toContain('Ranges streaming now (1 more waiting):');
    expect(text).toMatch(/^n4 +in +00000000000000aa 00000000000000bb +n1 +active +10 +1\.00 KiB$/m);
    expect(text).toMatch(/^n1 +out /m);
    expect(text).toContain('Not answering: n9');
  });

  it('prints the counters (--verbose) on lines of at most 90 characters, not one long line', () => {
    const counters = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`counterNumber${i}`, i * 1000]));
    const text = formatStatus(
      { clusterName: 'c', nodeId: 'n1', replicas: 3, members: [member('n1', 'z1')], counters },
      { verbose: true },
    );
    const lines = text.slice(text.indexOf('Counters of n1')).split('\n').slice(1);
    expect(lines.length).toBeGreaterThan(4);
    expect(lines.every((l) => l.startsWith('  ') && l.length <= 90)).toBe(true);
    expect(lines.join(' ').split(/\s+/).filter(Boolean)).toEqual(Object.entries(counters).map(([k, v]) => `${k}=${v}`));
  });
});
