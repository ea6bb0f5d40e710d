/**
 * The `ringkv` command against one real node in this process (N=1, so the default
 * quorum is 1): values from files and stdin and back out byte for byte, the value limit,
 * R/W parsing, client-side gRPC errors in ringkv's words, --exit-code for missing keys,
 * the load `status` reports, getmany/putmany files in batches, and a node that refuses to
 * advertise a wildcard address.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/client/admin.js';
import { Client } from '../../src/client/index.js';
import { resolveConfig } from '../../src/node/config.js';
import { RingkvNode } from '../../src/node/node.js';
import { waitFor } from '../../testkit/wait.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const root = mkdtempSync(join(tmpdir(), 'ringkv-cli-'));
let node: RingkvNode;
let addr: string;

beforeAll(async () => {
  const config = resolveConfig(
    {
      listen: '127.0.0.1:0',
      dataDir: join(root, 'node'),
      id: 'cli',
      seeds: '127.0.0.1:1',
      replicas: 1,
      gossipIntervalMs: 100,
    },
    {},
  );
  node = await RingkvNode.start(config, pino({ level: 'silent' }));
  addr = node.address;
  await waitFor('the node is normal', 15_000, () => node.status === 'normal');
}, 30_000);

afterAll(async () => {
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** Run `ringkv ARGS` with `input` on stdin (none: stdin is /dev/null, not a terminal). */
function ringkv(args: readonly string[], input?: Buffer, extraEnv: Record<string, string> = {}): Promise<Run> {
  const env = { ...process.env };
  delete env.RINGKV_NODE;
  delete env.RINGKV_NODES;
  Object.assign(env, extraEnv);
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env,
  });
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  // The command may stop reading early (a value over the limit): that is not the test's error.
  child.stdin?.on('error', () => undefined);
  if (input !== undefined) child.stdin!.end(input);
  // A command that should have ended (a node that should have refused to start) is killed, not left behind.
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    }),
  );
}

const file = (name: string, bytes?: Buffer): string => {
  const p = join(root, name);
  if (bytes !== undefined) writeFileSync(p, bytes);
  return p;
};

describe('ringkv put and get: values are bytes, from files and stdin', () => {
  it('round-trips a value at the 1 MiB limit byte for byte through put --file and get --out, and stdin through get --out -', async () => {
    // Random bytes are not valid UTF-8: a detour through a string would change them.
    const big = randomBytes(1 << 20);
    const put = await ringkv(['put', 'bin', '--file', file('big.bin', big), '--node', addr]);
    expect(put.stderr).toBe('');
    expect(put.code).toBe(0);
    expect(put.stdout.toString()).toMatch(/^ok\ncontext: \S+\n$/);
    const get = await ringkv(['get', 'bin', '--out', file('big.out'), '--node', addr]);
    expect(get.code).toBe(0);
    expect(get.stdout.toString()).toMatch(/^wrote 1048576 bytes to .*big\.out\ncontext: \S+\n$/);
    expect(readFileSync(file('big.out')).equals(big)).toBe(true);

    // Over the old command-line ceiling (~128 KiB), on stdin with no VALUE, then --file -.
    const piped = randomBytes(300 * 1024);
    expect((await ringkv(['put', 'piped', '--node', addr], piped)).code).toBe(0);
    const back = await ringkv(['get', 'piped', '--out', '-', '--node', addr]);
    expect(back.code).toBe(0);
    expect(back.stdout.equals(piped)).toBe(true);
    expect(back.stderr).toMatch(/^context: \S+\n$/); // stdout holds the value alone
    const dash = randomBytes(1000);
    expect((await ringkv(['put', 'dash', '--file', '-', '--node', addr], dash)).code).toBe(0);
    const c = new Client({ nodes: [addr], tokenAware: false });
    try {
      expect((await c.get('dash')).values[0]!.equals(dash)).toBe(true);
    } finally {
      c.close();
    }
  }, 60_000);

  it('refuses a value over the limit with the limit, what to do and INVALID_ARGUMENT; one no request can carry before sending it', async () => {
    const over = await ringkv(['put', 'huge', '--file', file('huge.bin', randomBytes(3 << 20)), '--node', addr]);
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(
      /^ringkv: value of 3145728 bytes is over the limit of 1048576 bytes; split it into several keys \(gRPC INVALID_ARGUMENT\)\n$/,
    );
    const huge = await ringkv(['put', 'huge', '--file', file('huger.bin', randomBytes(9 << 20)), '--node', addr]);
    expect(huge.code).toBe(1);
    expect(huge.stderr).toMatch(
      /^ringkv: the value in .*huger\.bin, 9437184 bytes, is over the \d+ bytes one request to a node may carry; split it into several keys \(gRPC INVALID_ARGUMENT\)\n$/,
    );
    const piped = await ringkv(['put', 'huge', '--node', addr], randomBytes(9 << 20));
    expect(piped.code).toBe(1);
    expect(piped.stderr).toMatch(
      /^ringkv: the value on stdin is over the \d+ bytes one request to a node may carry; split it into several keys \(gRPC INVALID_ARGUMENT\)\n$/,
    );
    expect(over.stderr + huge.stderr + piped.stderr).not.toMatch(/larger than max/);
  }, 60_000);

  it('says what to give when there is no value, or two, and where a VALUE of @name went', async () => {
    const none = await ringkv(['put', 'k', '--node', addr]); // stdin is /dev/null: empty
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no value: stdin was empty; give VALUE, --file PATH, or pipe the value in/);
    const both = await ringkv(['put', 'k', 'v', '--file', file('v.txt', Buffer.from('x')), '--node', addr]);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/give the value either as VALUE or with --file, not both/);
    const at = await ringkv(['put', 'at', `@${file('v.txt')}`, '--node', addr]);
    expect(at.code).toBe(0);
    expect(at.stderr).toMatch(/stored the text "@.*v\.txt" itself; to store the file's bytes, use --file .*v\.txt/);
  }, 60_000);

  it('get --out refuses siblings unless --sibling chooses one, and writes nothing for a missing key', async () => {
    const c = new Client({ nodes: [addr], tokenAware: false });
    await c.put('sib', 'one');
    await c.put('sib', 'two'); // no context: a sibling
    c.close();
    const out = file('sib.out');
    const refused = await ringkv(['get', 'sib', '--out', out, '--node', addr]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /sib has 2 siblings \(concurrent writes\); --out writes one value: choose it with --sibling 1\.\.2/,
    );
    expect(existsSync(out)).toBe(false);
    const listed = JSON.parse((await ringkv(['get', 'sib', '--json', '--node', addr])).stdout.toString()) as {
      valuesBase64: string[];
    };
    const chosen = await ringkv(['get', 'sib', '--out', out, '--sibling', '2', '--node', addr]);
    expect(chosen.code).toBe(0);
    expect(readFileSync(out).toString('base64')).toBe(listed.valuesBase64[1]);
    const badChoice = await ringkv(['get', 'sib', '--out', out, '--sibling', '3', '--node', addr]);
    expect(badChoice.code).toBe(1);
    expect(badChoice.stderr).toMatch(/--sibling 3: sib has 2 siblings/);
    const missing = await ringkv(['get', 'nope', '--out', file('nope.out'), '--node', addr]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope: not found; nothing written to .*nope\.out/);
    expect(existsSync(file('nope.out'))).toBe(false);
  }, 60_000);
});

describe('ringkv put --request-id', () => {
  it('a put sent again with its request id is the same write: a value superseded since does not come back', async () => {
    const put = (...args: string[]) => ringkv(['put', '--node', addr, ...args]);
    expect((await put('rid-key', 'first', '--request-id', 'job-42')).code).toBe(0);
    const ctx = JSON.parse((await ringkv(['get', '--node', addr, 'rid-key', '--json'])).stdout.toString())
      .context as string;
    expect((await put('rid-key', 'second', '--context', ctx)).code).toBe(0);
    // The script runs again (it did not know whether the first put landed).
    expect((await put('rid-key', 'first', '--request-id', 'job-42')).code).toBe(0);
    expect(JSON.parse((await ringkv(['get', '--node', addr, 'rid-key', '--json'])).stdout.toString()).values).toEqual([
      'second',
    ]);
    // Without the id it is a new write, a sibling of the value there.
    expect((await put('rid-key', 'first')).code).toBe(0);
    expect(
      JSON.parse((await ringkv(['get', '--node', addr, 'rid-key', '--json'])).stdout.toString()).values.sort(),
    ).toEqual(['first', 'second']);
  });

  it('refuses a request id over 64 bytes, saying what to use', async () => {
    const r = await ringkv(['put', '--node', addr, 'k', 'v', '--request-id', 'x'.repeat(65)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/request id must be 1 to 64 bytes, got 65; use a UUID/);
  });
});

describe('ringkv R and W', () => {
  it('takes 0 as a majority, as the node does, and passes other numbers to the node, whose message fits the rule', async () => {
    expect((await ringkv(['put', 'q', 'v', '--w', '0', '--node', addr])).code).toBe(0);
    expect((await ringkv(['get', 'q', '--r', '0', '--node', addr])).stdout.toString()).toMatch(/^v\n/);
    const five = await ringkv(['put', 'q', 'v', '--w', '5', '--node', addr]);
    expect(five.code).toBe(1);
    expect(five.stderr).toBe('ringkv: w must be 1 to N=1 (or 0 for a majority, 1), got 5 (gRPC INVALID_ARGUMENT)\n');
    const bad = await ringkv(['get', 'q', '--r', '-1', '--node', addr]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /--r <r>' argument '-1' is invalid\. expected 0 \(a majority\) or a whole number from 1 to N/,
    );
  }, 60_000);
});

describe('ringkv errors from gRPC itself, in ringkv words with the code name', () => {
  it('a name that does not resolve, nothing listening, a deadline that passed; server messages unchanged', async () => {
    const [name, status, refused, deadline, noPort, help] = await Promise.all([
      // .invalid never resolves (RFC 6761), whatever the resolver's search domains.
      ringkv(['get', 'k', '--node', 'nonsense.invalid:7001']),
      ringkv(['status', '--node', 'nonsense.invalid:7001']),
      ringkv(['get', 'k', '--node', '127.0.0.1:1']),
      ringkv(['get', 'k', '--node', addr, '--deadline-ms', '1']),
      ringkv(['status', '--node', '127.0.0.1']),
      ringkv(['delete', 'x', '--help']),
    ]);
    for (const r of [name, status]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        'ringkv: cannot reach a ringkv node at nonsense.invalid:7001: the name does not resolve; pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES (gRPC UNAVAILABLE)\n',
      );
    }
    // A host with no port is refused before any call, saying what to pass.
    expect(noPort.code).toBe(1);
    expect(noPort.stderr).toMatch(
      /'127\.0\.0\.1' is invalid\. expected host:port, got "127\.0\.0\.1" with no port: .* like 127\.0\.0\.1:7001/,
    );
    // delete is del's other name: its own help, not the program's.
    expect(help.stdout.toString()).toMatch(/^Usage: ringkv del\|delete \[options\] <key>/);
    expect(refused.stderr).toBe(
      'ringkv: no ringkv node answers at 127.0.0.1:1 (connection refused); is it running, and is that its --listen address? Pass --node host:port of a running node (or several, comma-separated), or set RINGKV_NODES (gRPC UNAVAILABLE)\n',
    );
    expect(deadline.code).toBe(1);
    expect(deadline.stderr).toMatch(
      new RegExp(
        `^ringkv: no answer from ${addr.replace(/\./g, '\\.')} within 1 ms \\(--deadline-ms\\); .* \\(gRPC DEADLINE_EXCEEDED\\)\\n$`,
      ),
    );
    expect(name.stderr + status.stderr + refused.stderr + deadline.stderr).not.toMatch(
      /Name resolution failed|Deadline exceeded after|ECONNREFUSED/,
    );
  }, 60_000);
});

describe('several --node addresses (or RINGKV_NODES)', () => {
  it('tries them in turn while one cannot be reached, for key and admin commands alike', async () => {
    const down = '127.0.0.1:1';
    const put = await ringkv(['put', 'contact', 'points', '--node', `${down},${addr}`]);
    const [get, status, env, allDown, decommission] = await Promise.all([
      ringkv(['get', 'contact', '--node', `${down}, ${addr}`]),
      ringkv(['status', '--node', `${down},${addr}`]),
      ringkv(['bucket', 'list'], undefined, { RINGKV_NODES: `${down},${addr}` }),
      ringkv(['status', '--node', `${down},127.0.0.1:2`]),
      // A command that acts on one node takes one: a list is no node.
      ringkv(['decommission', '--node', `${down},${addr}`]),
    ]);
    expect([put.code, get.code, status.code, env.code], put.stderr + get.stderr + status.stderr + env.stderr).toEqual([
      0, 0, 0, 0,
    ]);
    expect(get.stdout.toString()).toMatch(/^points\n/);
    expect(status.stdout.toString()).toMatch(/^Cluster: /);
    expect(env.stdout.toString()).toMatch(/^Bucket +Type/);
    expect(allDown.code).toBe(1);
    expect(allDown.stderr).toMatch(
      /^ringkv: no ringkv node answers at 127\.0\.0\.1:1, 127\.0\.0\.1:2 \(connection refused\)/,
    );
    expect(decommission.code).toBe(1);
    expect(decommission.stderr).toMatch(/expected host:port/);
  }, 60_000);
});

describe('ringkv get and del of a missing key', () => {
  it('get exits 2 for a key not found (--exit-code, still taken, changes nothing); del exits 0 for nothing to delete, or 2 with --exit-code', async () => {
    const [get, getX, del, delX] = await Promise.all([
      ringkv(['get', 'absent', '--node', addr]),
      ringkv(['get', 'absent', '--exit-code', '--node', addr]),
      ringkv(['del', 'absent', '--node', addr]),
      ringkv(['del', 'absent2', '--exit-code', '--node', addr]),
    ]);
    expect([get.code, getX.code, del.code, delX.code]).toEqual([2, 2, 0, 2]);
    expect(get.stdout.toString()).toMatch(/^absent: not found\n/);
    expect(getX.stdout.toString()).toMatch(/^absent: not found\n/);
    expect(del.stdout.toString()).toBe('nothing to delete: absent was not found\n');
    expect(delX.stdout.toString()).toBe('nothing to delete: absent2 was not found\n');
    expect((await ringkv(['put', 'present', 'v', '--node', addr])).code).toBe(0);
    const delPresent = await ringkv(['del', 'present', '--exit-code', '--node', addr]);
    expect(delPresent.code).toBe(0);
    expect(delPresent.stdout.toString()).toBe('deleted present\n');
    expect((await ringkv(['get', 'present', '--exit-code', '--node', addr])).code).toBe(2);
    expect((await ringkv(['get', 'present', '--node', addr])).code).toBe(2);
    expect((await ringkv(['put', 'present', 'back', '--node', addr])).code).toBe(0);
    expect((await ringkv(['get', 'present', '--node', addr])).code).toBe(0);
  }, 60_000);
});

describe('ringkv status load', () => {
  it('counts data LevelDB has not flushed yet: after 1.1 MiB of writes the load is at least 1 MiB', async () => {
    const c = new Client({ nodes: [addr], tokenAware: false });
    for (let i = 0; i < 11; i++) await c.put(`load:${i}`, randomBytes(100 * 1024));
    c.close();
    const admin = new AdminClient(addr);
    try {
      // The node measures its load every 5 s.
      await waitFor(
        'load ≥ 1 MiB',
        12_000,
        async () => ((await admin.status()).members[0]!.loadBytes >= 1 << 20 ? true : undefined),
        250,
      );
    } finally {
      admin.close();
    }
  }, 30_000);
});

describe('ringkv node with a wildcard listen address', () => {
  it('exits non-zero, asking for --advertise, instead of advertising an address peers cannot use', async () => {
    const r = await ringkv([
      'node',
      '--listen',
      '0.0.0.0:0',
      '--data-dir',
      join(root, 'wild'),
      '--log-level',
      'silent',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /--listen 0\.0\.0\.0:0 binds every interface, so peers need to be told where to reach this node: pass --advertise host:port/,
    );
  }, 30_000);
});

describe('ringkv getmany and putmany', () => {
  it('write and read a file of keys in batches, one line per key; a repeated key or a bad line is refused on its own line (exit 4)', async () => {
    // 250 keys: three batches; one repeat, refused on its later line.
    const lines = Array.from({ length: 250 }, (_, i) => `batch-${i}\tvalue ${i}\twith a tab`);
    lines.splice(100, 0, 'batch-7\tagain');
    const file = join(root, 'kv.tsv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const put = await ringkv(['putmany', '--file', file, '--node', addr]);
    expect(put.stderr).toMatch(/1 of 251 keys failed .*; the others succeeded/);
    expect(put.code).toBe(4);
    const out = put.stdout.toString().trimEnd().split('\n');
    expect(out).toHaveLength(251);
    expect(out[0]).toBe('ok\tbatch-0');
    expect(out[100]).toMatch(/^error\tbatch-7\tINVALID_ARGUMENT: the key is repeated in the file \(first on line 8\)/);
    expect(out.filter((l) => l.startsWith('ok\t'))).toHaveLength(250);
    // Read back from stdin, with a missing key: every key found (the first write of batch-7), exit 0.
    const keys = Buffer.from(['batch-7', 'batch-249', 'absent', 'batch-0'].join('\n'));
    const get = await ringkv(['getmany', '--file', '-', '--node', addr], keys);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout.toString().trimEnd().split('\n')).toEqual([
      'found\tbatch-7\tvalue 7\twith a tab',
      'found\tbatch-249\tvalue 249\twith a tab',
      'notfound\tabsent',
      'found\tbatch-0\tvalue 0\twith a tab',
    ]);
    const json = await ringkv(['getmany', '--file', '-', '--node', addr, '--json'], Buffer.from('batch-1\n'));
    expect(JSON.parse(json.stdout.toString())).toMatchObject({
      key: 'batch-1',
      ok: true,
      found: true,
      valuesBase64: [Buffer.from('value 1\twith a tab').toString('base64')],
    });
  });

  it('refuses a file with no lines or a line with no tab, and an unknown bucket, exiting 1 with what to give', async () => {
    const empty = await ringkv(['getmany', '--file', '-', '--node', addr], Buffer.from('\n\n'));
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/has no lines: give one key \(getmany\) or key<TAB>value \(putmany\) per line/);
    const noTab = await ringkv(['putmany', '--file', '-', '--node', addr], Buffer.from('a\t1\nb 2\n'));
    expect(noTab.code).toBe(1);
    expect(noTab.stderr).toMatch(/line 2 of --file - has no tab/);
    const missing = await ringkv(['getmany', '--file', join(root, 'no-such-file'), '--node', addr]);
    expect(missing.stderr).toMatch(/cannot read --file .*no such file/);
    const bucket = await ringkv(['getmany', '--file', '-', '--node', addr, '--bucket', 'nosuch'], Buffer.from('a\n'));
    expect(bucket.code).toBe(1);
    expect(bucket.stderr).toMatch(/there is no bucket nosuch.*NOT_FOUND/);
  });
});
