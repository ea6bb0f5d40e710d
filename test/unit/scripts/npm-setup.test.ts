/**
 * What `npm ci && npm start` does on a fresh clone, as package.json and tsconfig.build.json
 * say: every dependency's install script is decided (allowScripts), so `npm ci` ends
 * without a list of skipped ones; and `npm start`'s build is incremental, so a start with
 * nothing changed does not compile everything again.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');

describe('npm ci and npm start', () => {
  it('every install script of a dependency is approved or denied in allowScripts', () => {
    const out = execFileSync('npm', ['install-scripts', 'ls'], { cwd: root, encoding: 'utf8' });
    expect(out.trim()).toBe('No packages with unreviewed install scripts.');
  });

  it('npm start builds incrementally, its build info inside dist/ (removing dist/ rebuilds all)', () => {
    const text = readFileSync(join(root, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
    const build = JSON.parse(text) as {
      compilerOptions: { incremental?: boolean; tsBuildInfoFile?: string; outDir: string };
    };
    expect(build.compilerOptions.incremental).toBe(true);
    expect(build.compilerOptions.tsBuildInfoFile?.startsWith(`${build.compilerOptions.outDir}/`)).toBe(true);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prestart).toBe('npm run build --silent');
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
  });
});
