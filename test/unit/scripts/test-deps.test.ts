/**
 * scripts/test-deps.sh, which `npm test` and .ci/run both run first: on a machine that
 * lacks the suite's system tools it installs them as root, and otherwise names them in
 * one line and lets the suite go on. Run with a PATH of stand-ins, so that which tools
 * "exist", who we are, and what apt-get was asked are the test's to set.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../../scripts/test-deps.sh');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A bin dir with the coreutils the script uses, `id -u` answering `uid`, and the named tools present. */
function fakeBin(uid: number, present: readonly string[], aptExit = 0): { bin: string; aptLog: string } {
  const bin = mkdtempSync(join(tmpdir(), 'ringkv-deps-'));
  dirs.push(bin);
  for (const t of ['mktemp', 'tail', 'rm', 'cat'])
    symlinkSync(spawnSync('bash', ['-c', `command -v ${t}`], { encoding: 'utf8' }).stdout.trim(), join(bin, t));
  const tool = (name: string, body: string): void => {
    writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  tool('id', `echo ${uid}`);
  const aptLog = join(bin, 'apt.log');
  tool('apt-get', `echo "$@" >> ${aptLog}; exit ${aptExit}`);
  for (const p of present) tool(p, 'exit 0');
  return { bin, aptLog };
}

const run = (bin: string, env: Record<string, string> = {}) =>
  spawnSync('/bin/bash', [script], { encoding: 'utf8', env: { PATH: bin, ...env } });
const chromium = existsSync('/usr/bin/chromium') ? [] : ['chromium'];

describe('scripts/test-deps.sh', () => {
  // /usr/bin/chromium is looked for at its path, not on PATH: this case needs it installed.
  it.skipIf(chromium.length > 0)('does nothing, silently, when every tool is there', () => {
    const { bin, aptLog } = fakeBin(0, ['ip', 'nft', 'dockerd', 'docker-compose', 'debootstrap']);
    const r = run(bin);
    expect(r.status).toBe(0);
    expect(r.stdout + r.stderr).toBe('');
    expect(existsSync(aptLog)).toBe(false);
  });

  it('as root, installs exactly the missing packages from Debian', () => {
    const { bin, aptLog } = fakeBin(0, ['ip', 'nft', 'dockerd']);
    const r = run(bin);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^test-deps: installing .* for the test suite \(Debian packages\)$/m);
    const calls = readFileSync(aptLog, 'utf8').trim().split('\n');
    expect(calls[0]).toBe('update -qq');
    expect(calls[1]!.split(' ').slice(3).sort()).toEqual([...chromium, 'debootstrap', 'docker-compose'].sort());
  });

  it('not as root, names what to install in one line and exits 0 so the rest of the suite runs', () => {
    const { bin, aptLog } = fakeBin(1000, ['nft', 'dockerd', 'docker-compose']);
    const r = run(bin);
    expect(r.status).toBe(0);
    const missing = ['iproute2', ...chromium, 'debootstrap'].join(' ');
    expect(r.stdout).toBe(
      `test-deps: missing ${missing} (as root: apt-get install ${missing}); the tests that need them skip\n`,
    );
    expect(existsSync(aptLog)).toBe(false);
  });

  it('when apt-get fails, says why and goes on; under CI=true it fails, since CI must run every test', () => {
    const { bin } = fakeBin(0, ['ip', 'nft', 'dockerd', 'docker-compose'], 100);
    const r = run(bin);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('test-deps: apt-get failed');
    expect(r.stdout).toContain('test-deps: missing');
    expect(run(bin, { CI: 'true' }).status).toBe(1);
  });
});
