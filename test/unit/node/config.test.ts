import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG, resolveConfig } from '../../../src/node/config.js';
import { loadIdentity, saveIdentity, writeAtomically } from '../../../src/node/identity.js';

const dir = mkdtempSync(join(tmpdir(), 'ringkv-config-'));

describe('node configuration', () => {
  it('takes flags over environment over config file over defaults', () => {
    const file = join(dir, 'c.json');
    writeFileSync(file, JSON.stringify({ zone: 'file-zone', rack: 'file-rack', tokens: 16, seeds: ['127.0.0.1:1'] }));
    const c = resolveConfig({ zone: 'flag-zone' }, { RINGKV_RACK: 'env-rack', RINGKV_WEIGHT: '2.5' }, file);
    expect(c).toMatchObject({
      zone: 'flag-zone',
      rack: 'env-rack',
      tokens: 16,
      weight: 2.5,
      seeds: ['127.0.0.1:1'],
      listen: DEFAULT_CONFIG.listen,
    });
    expect(resolveConfig({ seeds: '127.0.0.1:1, 127.0.0.1:2,' }, {}).seeds).toEqual(['127.0.0.1:1', '127.0.0.1:2']);
    expect(resolveConfig({ listen: '127.0.0.1:0' }, {}).listen).toBe('127.0.0.1:0');
  });

  it('names the setting, where it came from and what is accepted', () => {
    const cases: [Record<string, unknown>, NodeJS.ProcessEnv, RegExp][] = [
      [{ listen: 'localhost' }, {}, /--listen: expected host:port/],
      [{}, { RINGKV_TOKENS: '0' }, /RINGKV_TOKENS: expected a whole number from 1 to 4096/],
      [{ weight: 'heavy' }, {}, /--weight: expected a number/],
      [{ seeds: '127.0.0.1:1,nope' }, {}, /--seeds: expected host:port/],
      [{ logLevel: 'loud' }, {}, /--log-level: expected one of fatal, error/],
      [{ id: '-x' }, {}, /--id: expected 1-128 letters/],
      [{ zone: 'a b' }, {}, /--zone: expected at most 256 characters, no spaces/],
      [{ durability: 'maybe' }, {}, /--durability: expected 'default' or 'sync'/],
      [{ advertise: '127.0.0.1:0' }, {}, /--advertise: expected host:port/],
      [{ cleanupAfterMs: '-1' }, {}, /--cleanup-after-ms: expected a whole number from 0 to 2592000000/],
      [{}, { RINGKV_LEAVER_WAIT_MS: 'soon' }, /RINGKV_LEAVER_WAIT_MS: expected a whole number from 0 to 86400000/],
    ];
    for (const [flags, env, re] of cases) expect(() => resolveConfig(flags, env)).toThrow(re);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"lsiten": "x"}');
    expect(() => resolveConfig({}, {}, bad)).toThrow(/unknown setting "lsiten"/);
    writeFileSync(bad, '{"toString": 1}');
    expect(() => resolveConfig({}, {}, bad)).toThrow(/unknown setting "toString"/);
    writeFileSync(bad, '{');
    expect(() => resolveConfig({}, {}, bad)).toThrow(ConfigError);
    expect(() => resolveConfig({}, {}, join(dir, 'missing.json'))).toThrow(/cannot read config file/);
  });
});

describe('the --http setting', () => {
  it('is off by default and by "off", takes host:port (port 0: any), and refuses anything else', () => {
    expect(DEFAULT_CONFIG.http).toBeUndefined();
    expect(resolveConfig({}, { RINGKV_HTTP: '0.0.0.0:8080' }).http).toBe('0.0.0.0:8080');
    expect(resolveConfig({ http: '127.0.0.1:0' }, {}).http).toBe('127.0.0.1:0');
    expect(resolveConfig({ http: 'off' }, { RINGKV_HTTP: '0.0.0.0:8080' }).http).toBeUndefined();
    expect(() => resolveConfig({ http: '8080' }, {})).toThrow(
      /--http: expected host:port, like 127\.0\.0\.1:7001, got "8080"/,
    );
  });
});

describe('the address a node advertises', () => {
  it('is the listen address unless --advertise says otherwise', () => {
    expect(resolveConfig({ listen: '10.0.0.5:7001' }, {}).advertise).toBe('10.0.0.5:7001');
    expect(resolveConfig({}, {}).advertise).toBe(DEFAULT_CONFIG.listen);
    expect(resolveConfig({ listen: '0.0.0.0:7001', advertise: '10.0.0.5:7001' }, {}).advertise).toBe('10.0.0.5:7001');
    // Port 0 binds any free port: the node advertises the one it got (node.ts), so it stays unset here.
    expect(resolveConfig({ listen: '127.0.0.1:0' }, {}).advertise).toBeUndefined();
  });

  it('refuses a wildcard as the address to advertise, saying to pass --advertise', () => {
    for (const listen of ['0.0.0.0:7001', '[::]:7001', '[0:0:0:0:0:0:0:0]:7001']) {
      expect(() => resolveConfig({ listen }, {})).toThrow(
        new RegExp(
          `^--listen ${listen.replace(/[[\].]/g, '\\$&')} binds every interface, so peers need to be told where to reach this node: pass --advertise host:port`,
        ),
      );
    }
    expect(() => resolveConfig({}, { RINGKV_LISTEN: '0.0.0.0:0' })).toThrow(
      /^RINGKV_LISTEN 0\.0\.0\.0:0 binds every interface.*pass --advertise host:port \(or RINGKV_ADVERTISE\)/,
    );
    expect(() => resolveConfig({ listen: '0.0.0.0:7001', advertise: '0.0.0.0:7001' }, {})).toThrow(
      /^--advertise 0\.0\.0\.0:7001 is a wildcard, not an address peers can reach/,
    );
    expect(() => resolveConfig({ advertise: '[::]:7001' }, {})).toThrow(/^--advertise \[::\]:7001 is a wildcard/);
  });
});

describe('node identity', () => {
  it('keeps id and tokens across restarts with a larger generation; a wiped dir is a new node', async () => {
    const d = join(dir, 'id1');
    const first = await loadIdentity(d, { id: undefined, clusterName: 'c' }, 5_000_000);
    expect(first.id).toMatch(/^n-[0-9a-f]{12}$/);
    await saveIdentity(d, { ...first, tokens: [1n, 2n], status: 'normal' });
    const again = await loadIdentity(d, { id: undefined, clusterName: 'c' }, 1_000); // clock stepped back
    expect(again).toMatchObject({ id: first.id, tokens: [1n, 2n], status: 'normal', generation: first.generation + 1 });
    // What a node gossips of the nodes it decommissions or removes survives a restart too.
    await saveIdentity(d, { ...again, heirs: 'n9=0000000000000005:n2' });
    expect((await loadIdentity(d, { id: undefined, clusterName: 'c' }, 1_000)).heirs).toBe('n9=0000000000000005:n2');
    const fresh = await loadIdentity(join(dir, 'id2'), { id: undefined, clusterName: 'c' }, 5_000_000);
    expect(fresh.id).not.toBe(first.id);
  });

  it('refuses a data dir of another node or cluster, and a damaged node.json, with what to do', async () => {
    const d = join(dir, 'id3');
    const me = await loadIdentity(d, { id: 'n1', clusterName: 'c' }, 1e9);
    await saveIdentity(d, me);
    await expect(loadIdentity(d, { id: 'n2', clusterName: 'c' }, 1e9)).rejects.toThrow(
      /belongs to node n1, not n2: start with --id n1/,
    );
    await expect(loadIdentity(d, { id: 'n1', clusterName: 'x' }, 1e9)).rejects.toThrow(/belongs to cluster "c"/);
    writeFileSync(
      join(d, 'node.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(join(d, 'node.json'), 'utf8')), heirs: 'n9=5:n2' }),
    );
    await expect(loadIdentity(d, { id: 'n1', clusterName: 'c' }, 1e9)).rejects.toThrow(/damaged \(bad heirs\)/);
    writeFileSync(join(d, 'node.json'), '{"id": "n1"}');
    await expect(loadIdentity(d, { id: 'n1', clusterName: 'c' }, 1e9)).rejects.toThrow(
      /damaged .*restore it from a backup/,
    );
  });

  it('writes a file atomically even when many writes of it run at once: none fails, one wins whole, no temp file stays', async () => {
    const d = join(dir, 'atomic');
    mkdirSync(d, { recursive: true });
    const texts = Array.from({ length: 20 }, (_, i) => `${JSON.stringify({ n: i, pad: 'x'.repeat(1000 * i) })}\n`);
    await Promise.all(texts.map((t) => writeAtomically(d, 'stage.json', t)));
    expect(texts).toContain(readFileSync(join(d, 'stage.json'), 'utf8'));
    expect(readdirSync(d)).toEqual(['stage.json']);
  });

  it('refuses to start a node that decommissioned and left, saying what to do instead', async () => {
    const d = join(dir, 'id4');
    const me = await loadIdentity(d, { id: 'n4', clusterName: 'c' }, 1e9);
    await saveIdentity(d, { ...me, tokens: [1n], status: 'left' });
    await expect(loadIdentity(d, { id: 'n4', clusterName: 'c' }, 1e9)).rejects.toThrow(
      /node n4 decommissioned and left the cluster .*start a new node with a new id and an empty data dir/,
    );
  });
});

describe('TLS and credential settings', () => {
  it('takes the three TLS files together, from flags or the environment', () => {
    const c = resolveConfig(
      { tlsCert: 'n1.pem', tlsKey: 'n1-key.pem' },
      { RINGKV_TLS_CA: 'ca.pem', RINGKV_CLIENT_AUTH: 'cert' },
    );
    expect(c).toMatchObject({ tlsCert: 'n1.pem', tlsKey: 'n1-key.pem', tlsCa: 'ca.pem', clientAuth: 'cert' });
    expect(resolveConfig({}, {})).toMatchObject({ tlsCert: undefined, clientAuth: 'none', adminTokenFile: undefined });
  });

  it('refuses some of the TLS files without the others, naming what is missing', () => {
    expect(() => resolveConfig({ tlsCert: 'n1.pem' }, {})).toThrow(
      /TLS needs all three of --tls-cert, --tls-key and --tls-ca .* only --tls-cert given/,
    );
    expect(() => resolveConfig({ tlsCert: 'n1.pem', tlsCa: 'ca.pem' }, {})).toThrow(
      /only --tls-cert and --tls-ca given/,
    );
  });

  it('refuses client auth without TLS, and values it does not know', () => {
    expect(() => resolveConfig({ clientAuth: 'cert' }, {})).toThrow(/--client-auth cert needs TLS/);
    expect(() => resolveConfig({ clientAuth: 'yes' }, {})).toThrow(
      /--client-auth: expected 'none' or 'cert', got "yes"/,
    );
    expect(() => resolveConfig({ adminTokenFile: '' }, {})).toThrow(/--admin-token-file: expected a file path/);
  });

  it('takes read auth with a credential to check, and on the HTTP port only with the admin token', () => {
    const tls = { tlsCert: 'n1.pem', tlsKey: 'n1-key.pem', tlsCa: 'ca.pem' };
    expect(resolveConfig({}, {}).readAuth).toBe('none');
    expect(resolveConfig(tls, { RINGKV_READ_AUTH: 'credential' }).readAuth).toBe('credential');
    expect(
      resolveConfig({ readAuth: 'credential', adminTokenFile: 'admin.token', http: '127.0.0.1:0' }, {}).readAuth,
    ).toBe('credential');
    expect(() => resolveConfig({ readAuth: 'credential' }, {})).toThrow(
      /--read-auth credential needs a credential to check: TLS .* or --admin-token-file/,
    );
    expect(() => resolveConfig({ ...tls, readAuth: 'credential', http: '127.0.0.1:0' }, {})).toThrow(
      /--read-auth credential with --http needs --admin-token-file/,
    );
    expect(() => resolveConfig({ readAuth: 'cert' }, {})).toThrow(
      /--read-auth: expected 'none' or 'credential', got "cert"/,
    );
  });
});
