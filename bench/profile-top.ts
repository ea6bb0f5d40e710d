/**
 * Summarise V8 CPU profiles (.cpuprofile, from `node --cpu-prof` or the inspector): the
 * top functions by self time, and by total time (self plus callees, each sample counted
 * once per function however deep it recurses). Several files are summed, e.g. every
 * worker's profile of one run.
 *
 *   node --import tsx bench/profile-top.ts FILE|DIR... [--top 15] [--filter TEXT] [--busy]
 *
 * A directory means every .cpuprofile in it. Functions are keyed by name + url (the
 * url's path under the working directory, or node:… / its last two segments). --filter
 * keeps, in the total-time table, only functions whose name or url contains TEXT
 * (e.g. src/storage); without it that table shows everything. (idle), (program) and
 * (garbage collector) are V8's own buckets: (idle) is the main thread waiting for I/O;
 * (native) is native code a script called (a binding's function, e.g. classic-level's);
 * percentages are of all samples unless --busy, which leaves (idle) out.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

process.stdout.on('error', () => process.exit(0)); // piped into head: stop quietly
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const value = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const TOP = Number(value('--top', '15'));
const FILTER = value('--filter', '');
const BUSY = flag('--busy');
const inputs = args.filter((a, i) => !a.startsWith('--') && !['--top', '--filter'].includes(args[i - 1] ?? ''));
if (inputs.length === 0) {
  console.error('usage: profile-top.ts FILE|DIR... [--top N] [--filter TEXT] [--busy]');
  process.exit(2);
}

const files = inputs.flatMap((p) =>
  statSync(p).isDirectory()
    ? readdirSync(p)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(p, f))
    : [p],
);

function where(url: string): string {
  if (url === '') return '';
  if (url.startsWith('node:')) return url;
  const path = url.replace(/^file:\/\//, '');
  const rel = relative(process.cwd(), path);
  if (!rel.startsWith('..') && !rel.includes('node_modules')) return rel;
  const nm = path.lastIndexOf('node_modules/');
  return nm >= 0 ? path.slice(nm + 'node_modules/'.length) : path.split('/').slice(-2).join('/');
}

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0,
  idle = 0;

for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: ProfileNode) => {
    const w = where(n.callFrame.url);
    // A nameless frame without a script is native code called from JavaScript (a binding).
    const name = n.callFrame.functionName || (w ? '(anonymous)' : '(native)');
    // Code tsx compiled sits on line 1: its line says nothing, the file and name do.
    return w ? `${name} ${w}${n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : ''}` : name;
  };
  const labels = new Map(p.nodes.map((n) => [n.id, label(n)]));
  // Sample i lasts timeDeltas[i + 1] (the delta recorded with the next sample).
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    const id = p.samples[i]!;
    const l = labels.get(id)!;
    all += dt;
    if (l === '(idle)') idle += dt;
    self.set(l, (self.get(l) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = labels.get(at)!;
      if (seen.has(name) || byId.get(at) === undefined) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + dt);
    }
  }
}

const base = BUSY ? all - idle : all;
const pct = (t: number) => `${((100 * t) / base).toFixed(1)}%`.padStart(6);
const ms = (t: number) => `${(t / 1000).toFixed(0)} ms`.padStart(9);
console.log(
  `${files.length} profile(s), ${(all / 1e6).toFixed(2)} s sampled, idle ${((100 * idle) / all).toFixed(1)}%${BUSY ? '; % of busy time' : ''}\n`,
);
console.log(`top ${TOP} by self time`);
for (const [name, t] of [...self]
  .filter(([n]) => !(BUSY && n === '(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, TOP))
  console.log(`${pct(t)} ${ms(t)}  ${name}`);
console.log(`\ntop ${TOP} by total time${FILTER ? ` (matching "${FILTER}")` : ''}`);
for (const [name, t] of [...total]
  .filter(([n]) => (FILTER ? n.includes(FILTER) : !n.startsWith('(root)') && !(BUSY && n === '(idle)')))
  .sort((a, b) => b[1] - a[1])
  .slice(0, TOP))
  console.log(`${pct(t)} ${ms(t)}  ${name}`);
