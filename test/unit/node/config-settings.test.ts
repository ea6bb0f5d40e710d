/**
 * What is derived from the table of settings (src/node/settings.ts): the names a user
 * types (flags, environment variables), the defaults, and the check of every setting,
 * each kind of value refused with its message.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_CONFIG, ENV_NAMES, resolveConfig } from '../../../src/node/config.js';
import {
  SETTINGS,
  SETTING_NAMES,
  checkSetting,
  envOf,
  flagOf,
  hasDefault,
  type SettingName,
} from '../../../src/node/settings.js';

/** Refused with `message`, naming where the value came from and echoing it. */
function refused(name: SettingName, value: unknown, message: string): void {
  const from = flagOf(name);
  expect(() => checkSetting(name, value, from), `${name} = ${JSON.stringify(value)}`).toThrow(
    new ConfigError(`${from}: ${message}, got ${JSON.stringify(value)}`),
  );
}

describe('the names of the settings', () => {
  it('are the environment variables nodes have always read (scripts, compose files and manifests set them)', () => {
    const names =
      'RINGKV_ID RINGKV_LISTEN RINGKV_ADVERTISE RINGKV_DATA_DIR RINGKV_SEEDS RINGKV_ZONE RINGKV_RACK RINGKV_WEIGHT RINGKV_CLUSTER_NAME RINGKV_TOKENS RINGKV_LOG_LEVEL RINGKV_GOSSIP_INTERVAL_MS RINGKV_PHI_THRESHOLD RINGKV_DURABILITY RINGKV_MIN_FREE_DISK RINGKV_SHUTDOWN_GRACE_MS RINGKV_DRAIN_MS RINGKV_CATCH_UP_MS RINGKV_REPLICAS RINGKV_REQUEST_TIMEOUT_MS RINGKV_MAX_IN_FLIGHT RINGKV_MAX_CONNECTIONS RINGKV_MAX_CALLS_PER_CONNECTION RINGKV_HINT_BYTES_PER_SECOND RINGKV_STREAM_BYTES_PER_SECOND RINGKV_REPLACE RINGKV_BACKGROUND_LATENCY_FACTOR RINGKV_JOIN RINGKV_CLEANUP_AFTER_MS RINGKV_LEAVER_WAIT_MS RINGKV_MAX_HINT_WINDOW_MS RINGKV_REPAIR_INTERVAL_MS RINGKV_REPAIR_BYTES_PER_SECOND RINGKV_VERIFY_INTERVAL_MS RINGKV_VERIFY_BYTES_PER_SECOND RINGKV_KEPT_TREES RINGKV_TREE_DEPTH RINGKV_TREE_REBUILD_INTERVAL_MS RINGKV_TREE_REBUILD_JITTER_MS RINGKV_TOMBSTONE_GRACE_MS RINGKV_CLOCK_PRUNE_GRACE_MS RINGKV_CLOCK_OFFSET_MS RINGKV_FAULT_INJECTION RINGKV_HTTP RINGKV_READ_MODE RINGKV_TLS_CERT RINGKV_TLS_KEY RINGKV_TLS_CA RINGKV_CLIENT_AUTH RINGKV_READ_AUTH RINGKV_ADMIN_TOKEN_FILE';
    expect(Object.values(ENV_NAMES).sort()).toEqual(names.split(' ').sort());
    expect(ENV_NAMES).toMatchObject({
      dataDir: 'RINGKV_DATA_DIR',
      catchUpMs: 'RINGKV_CATCH_UP_MS',
      maxCallsPerConnection: 'RINGKV_MAX_CALLS_PER_CONNECTION',
      http: 'RINGKV_HTTP',
    });
    for (const name of SETTING_NAMES) expect(ENV_NAMES[name]).toBe(envOf(name));
  });

  it('are flags in kebab case, the name a flag sets and a config file uses', () => {
    expect(SETTING_NAMES.map(flagOf)).toContain('--data-dir');
    expect(flagOf('maxCallsPerConnection')).toBe('--max-calls-per-connection');
    expect(flagOf('tlsCa')).toBe('--tls-ca');
    expect(resolveConfig({}, { [envOf('gossipIntervalMs')]: '250' }).gossipIntervalMs).toBe(250);
    expect(() => resolveConfig({ maxHintWindowMs: 'x' }, {})).toThrow(/^--max-hint-window-ms: /);
  });
});

describe('the defaults', () => {
  it('are what a node runs with when nothing is set', () => {
    expect(DEFAULT_CONFIG).toEqual({
      id: undefined,
      listen: '127.0.0.1:7001',
      advertise: undefined,
      dataDir: './data',
      seeds: [],
      zone: '',
      rack: '',
      weight: 1,
      clusterName: 'ringkv',
      tokens: 64,
      logLevel: 'info',
      gossipIntervalMs: 1000,
      phiThreshold: 8,
      durability: 'default',
      shutdownGraceMs: 10_000,
      drainMs: 1000,
      catchUpMs: 30_000,
      replicas: 3,
      requestTimeoutMs: 5000,
      maxInFlight: 1024,
      maxConnections: 1024,
      maxCallsPerConnection: 1024,
      hintBytesPerSecond: 1 << 20,
      streamBytesPerSecond: 24 << 20,
      replace: undefined,
      backgroundLatencyFactor: 2,
      join: 'auto',
      cleanupAfterMs: 3_600_000,
      leaverWaitMs: 60_000,
      maxHintWindowMs: 10_800_000,
      repairIntervalMs: 600_000,
      repairBytesPerSecond: 8 << 20,
      verifyIntervalMs: 86_400_000,
      verifyBytesPerSecond: 8 << 20,
      keptTrees: 'on',
      treeDepth: 3,
      treeRebuildIntervalMs: 14 * 86_400_000,
      treeRebuildJitterMs: 4 * 86_400_000,
      tombstoneGraceMs: 864_000_000,
      clockOffsetMs: 0,
      faultInjection: 'off',
      http: undefined,
      readMode: 'digest',
      tlsCert: undefined,
      tlsKey: undefined,
      tlsCa: undefined,
      clientAuth: 'none',
      readAuth: 'none',
      adminTokenFile: undefined,
    });
    expect(resolveConfig({}, {})).toEqual({ ...DEFAULT_CONFIG, advertise: DEFAULT_CONFIG.listen });
  });

  it('each pass their own check, and a setting without a value says what that means (docs/node.md shows it)', () => {
    for (const name of SETTING_NAMES) {
      const d: unknown = SETTINGS[name].default;
      if (d !== undefined) expect(checkSetting(name, d, 'default'), name).toEqual(d);
      expect(
        hasDefault(name) || SETTINGS[name].unset !== undefined,
        `${name} has neither a default value nor an unset text`,
      ).toBe(true);
    }
  });
});

describe('the check of each setting', () => {
  it('takes numbers within their bounds, from a string or a number, and refuses the rest saying the bounds', () => {
    let checked = 0;
    for (const name of SETTING_NAMES) {
      const a = SETTINGS[name].accepts;
      if (a.kind !== 'number') continue;
      checked++;
      const expected = `expected ${a.integer ? 'a whole number' : 'a number'} from ${a.min} to ${a.max}`;
      expect(checkSetting(name, String(a.max), 'env')).toBe(a.max);
      expect(checkSetting(name, a.min, 'file')).toBe(a.min);
      refused(name, String(a.max + 1), expected);
      refused(name, a.min - 1, expected);
      refused(name, 'lots', expected);
      refused(name, true, 'expected a string');
      if (a.integer) refused(name, String(a.max - 0.5), expected);
      else expect(checkSetting(name, String(a.max - 0.5), 'env')).toBe(a.max - 0.5);
      if (a.orZero !== undefined) {
        expect(checkSetting(name, '0', 'env')).toBe(0);
        refused(name, String(a.integer ? a.orZero.from - 1 : a.orZero.from / 2), a.orZero.expected);
      }
    }
    expect(checked).toBe(29);
    refused('tokens', '0', 'expected a whole number from 1 to 4096');
    refused('backgroundLatencyFactor', '0.5', 'expected 0 (no governor) or a factor of at least 1');
    refused('streamBytesPerSecond', '1000', 'expected 0 (unthrottled) or at least 1024 bytes per second');
    refused('clockOffsetMs', '86400001', 'expected a whole number from -86400000 to 86400000');
  });

  it('takes each of a choice, and refuses anything else naming the choices', () => {
    const choices: Partial<Record<SettingName, string>> = {
      logLevel: 'expected one of fatal, error, warn, info, debug, trace, silent',
      durability: "expected 'default' or 'sync'",
      join: "expected 'auto' or 'manual'",
      readMode: "expected 'digest' or 'full'",
      clientAuth: "expected 'none' or 'cert'",
      readAuth: "expected 'none' or 'credential'",
      faultInjection: "expected 'off' or 'on'",
      keptTrees: "expected 'on' or 'off'",
    };
    expect(SETTING_NAMES.filter((n) => SETTINGS[n].accepts.kind === 'oneOf').sort()).toEqual(
      Object.keys(choices).sort(),
    );
    for (const [name, message] of Object.entries(choices) as [SettingName, string][]) {
      const a = SETTINGS[name].accepts;
      if (a.kind !== 'oneOf') throw new Error(name);
      for (const v of a.values) expect(checkSetting(name, v, 'env')).toBe(v);
      refused(name, 'maybe', message);
      refused(name, a.values[0]!.toUpperCase(), message);
    }
  });

  it('takes names, labels and paths as their patterns say', () => {
    expect(checkSetting('id', 'n1.a_b-c', 'env')).toBe('n1.a_b-c');
    refused('id', '-x', 'expected 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit');
    refused(
      'replace',
      'a'.repeat(129),
      'expected 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
    refused('clusterName', 'a b', 'expected 1-128 letters, digits, ".", "_" or "-"');
    expect(checkSetting('zone', 'eu-west-1a', 'env')).toBe('eu-west-1a');
    expect(checkSetting('rack', 'x'.repeat(256), 'env')).toBe('x'.repeat(256));
    refused('rack', 'x'.repeat(257), 'expected at most 256 characters, no spaces or commas');
    refused('zone', 'a,b', 'expected at most 256 characters, no spaces or commas');
    refused('dataDir', '', 'expected a directory path');
    refused('tlsKey', '', 'expected a file path');
    expect(checkSetting('tlsCa', ' ca.pem', 'env')).toBe(' ca.pem');
    expect(checkSetting('id', 12, 'file')).toBe('12');
    refused('id', { id: 'n1' }, 'expected a string');
  });

  it('takes host:port addresses, port 0 only where a port is bound, and "off" only for --http', () => {
    const expected = 'expected host:port, like 127.0.0.1:7001';
    expect(checkSetting('listen', '127.0.0.1:0', 'env')).toBe('127.0.0.1:0');
    expect(checkSetting('http', '[::1]:0', 'env')).toBe('[::1]:0');
    expect(checkSetting('http', 'off', 'env')).toBeUndefined();
    expect(checkSetting('advertise', 'n1.example:7001', 'env')).toBe('n1.example:7001');
    refused('advertise', '127.0.0.1:0', expected);
    refused('listen', 'off', expected);
    refused('listen', '127.0.0.1:65536', expected);
    refused('http', '8080', expected);
    expect(checkSetting('seeds', ' 127.0.0.1:1,,[::1]:2 ', 'env')).toEqual(['127.0.0.1:1', '[::1]:2']);
    expect(checkSetting('seeds', ['127.0.0.1:1'], 'file')).toEqual(['127.0.0.1:1']);
    refused('seeds', '127.0.0.1:1,127.0.0.1:0', expected);
  });
});
