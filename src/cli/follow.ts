/**
 * The operator's side of topology changes: follow a movement to its end with a live
 * progress bar on a terminal (cli-progress) or plain lines otherwise, and the
 * `ringkv transfers` table gathered from every member.
 *
 * Owns: polling and presenting. Must not: decide anything (the nodes do).
 */
import { cliSecurity } from './credential-flags.js';
import cliProgress from 'cli-progress';
import {
  AdminClient,
  clusterTransfers,
  type BucketDeletionInfo,
  type PlanReply,
  type RepairStatusReply,
  type StatusReply,
  type TransfersReply,
} from '../client/admin.js';
import { formatBytes } from './format.js';

export interface Progress {
  /** Ranges pulled and to pull, over every node that gains ranges. */
  readonly done: number;
  readonly total: number;
  readonly keys: number;
  readonly bytes: number;
  readonly phase: string;
}

type Tally = { -readonly [k in 'done' | 'total' | 'keys' | 'bytes']: number };

/** Count a gainer's pulled ranges into `t`: those done, and the keys and bytes of all. */
function addRanges(
  t: Tally,
  ranges: readonly { readonly state: string; readonly keys: number; readonly bytes: number }[],
): void {
  for (const r of ranges) {
    if (r.state === 'done') t.done++;
    t.keys += r.keys;
    t.bytes += r.bytes;
  }
}

/**
 * The movement `move` as its driver and its gainers report it now. A gainer the driver
 * counts done is taken at the driver's word, unless `askEveryGainer` (the driver has
 * exited, so its last word may predate the end): then each gainer says what it pulled.
 */
export async function progressOf(
  driver: TransfersReply,
  move: string,
  addressOf: (id: string) => string | undefined,
  askEveryGainer = false,
): Promise<Progress> {
  const d = driver.drive;
  if (d === null || d.move !== move)
    return { done: 0, total: 0, keys: 0, bytes: 0, phase: 'waiting for every member to see the change' };
  const t: Tally = { done: 0, total: 0, keys: 0, bytes: 0 };
  await Promise.all(
    d.gainers.map(async (g) => {
      t.total += g.ranges;
      const asDriverSays = (): void => {
        if (g.state !== 'done') return;
        t.done += g.ranges;
        t.keys += g.keys;
        t.bytes += g.bytes;
      };
      const addr = addressOf(g.node);
      if ((g.state === 'done' && !askEveryGainer) || addr === undefined) return asDriverSays();
      const c = new AdminClient(addr, 2000, cliSecurity());
      try {
        const pull = (await c.transfers()).pulls.find((p) => p.move === move);
        if (pull === undefined) return asDriverSays();
        addRanges(t, pull.ranges);
      } catch {
        asDriverSays(); // a gainer that does not answer shows no progress of its own
      } finally {
        c.close();
      }
    }),
  );
  return { ...t, phase: d.phase };
}

/**
 * The movement `move` as every member that pulled for it reports it: for a driver that
 * exited before any poll saw it drive (a small decommission can finish between two).
 */
export async function pulledFor(members: StatusReply, move: string): Promise<Progress> {
  const t: Tally = { done: 0, total: 0, keys: 0, bytes: 0 };
  for (const reply of (await clusterTransfers(members, cliSecurity())).replies) {
    for (const pull of reply.pulls.filter((p) => p.move === move)) {
      t.total += pull.ranges.length;
      addRanges(t, pull.ranges);
    }
  }
  return { ...t, phase: 'done' };
}

/**
 * Polls in a row a driver may miss before `follow` takes it as gone: a node streaming
 * under load can miss one 3 s poll and still be driving its change.
 */
export const MISSES_BEFORE_GONE = 5;

/**
 * Poll `driver` every `everyMs` until `finished` says the movement is over (true) or
 * failed (a string), showing progress. Returns the last progress seen.
 */
export async function follow(
  title: string,
  driverAddress: string,
  move: string,
  finished: (t: TransfersReply | undefined, last: Progress | undefined) => boolean | string,
  o: { everyMs?: number; timeoutMs?: number; out?: NodeJS.WriteStream } = {},
): Promise<Progress | undefined> {
  const shown = movementDisplay(title, o.out ?? process.stdout);
  const started = Date.now();
  const end = started + (o.timeoutMs ?? 24 * 3600_000);
  const pause = (): Promise<void> => new Promise((r) => setTimeout(r, o.everyMs ?? 500));
  const seen: Seen = { last: undefined, lastDrive: undefined, members: undefined };
  const admin = new AdminClient(driverAddress, 3000, cliSecurity());
  const addressOf = (id: string): string | undefined => seen.members?.members.find((m) => m.id === id)?.address;
  let misses = 0;
  try {
    shown.start();
    for (;;) {
      const t = await pollDriver(admin, seen);
      misses = t === undefined ? misses + 1 : 0;
      if (t === undefined && misses < MISSES_BEFORE_GONE && Date.now() <= end) {
        await pause();
        continue;
      }
      if (t !== undefined) {
        if (t.drive?.move === move) seen.lastDrive = t;
        seen.last = await progressOf(t, move, addressOf);
        shown.progress(seen.last, started);
      }
      const f = finished(t, seen.last);
      if (f === true) {
        const { last, phase } = await endOf(t, seen, move, addressOf);
        if (last !== undefined) shown.end(last, phase, started);
        return last;
      }
      if (typeof f === 'string') throw new Error(f);
      if (Date.now() > end)
        throw new Error(
          `${title}: still running after ${Math.round((Date.now() - started) / 1000)} s; follow it with ringkv transfers`,
        );
      await pause();
    }
  } finally {
    shown.stop();
    admin.close();
  }
}

/** What `follow` has seen of a movement: its last progress, the driver's last reply about it, the member table. */
interface Seen {
  last: Progress | undefined;
  lastDrive: TransfersReply | undefined;
  members: StatusReply | undefined;
}

/** One poll of the driver: its transfers (undefined when it did not answer), and the member table into `seen` the first time. */
async function pollDriver(admin: AdminClient, seen: Seen): Promise<TransfersReply | undefined> {
  try {
    const t = await admin.transfers();
    seen.members ??= await admin.status();
    return t;
  } catch {
    return undefined;
  }
}

/**
 * Where a movement `follow` sees over ended, and the phase to show. A driver that has
 * exited (`t` undefined; a leaver, once left) last spoke before the end: its gainers say
 * what they pulled.
 */
async function endOf(
  t: TransfersReply | undefined,
  seen: Seen,
  move: string,
  addressOf: (id: string) => string | undefined,
): Promise<{ last: Progress | undefined; phase: string | undefined }> {
  if (t === undefined && (seen.lastDrive !== undefined || seen.members !== undefined)) {
    const last =
      seen.lastDrive !== undefined
        ? await progressOf(seen.lastDrive, move, addressOf, true)
        : await pulledFor(seen.members!, move);
    return { last, phase: last.done === last.total ? 'done; the driver has exited' : 'the driver has exited' };
  }
  return { last: seen.last, phase: seen.last?.phase };
}

/** How `follow` shows a movement: a live bar on a terminal, otherwise a line at most every 2 s and one at the end. */
interface MovementDisplay {
  /** Put the bar up. */
  start(): void;
  /** Show the progress of a movement followed since `started`. */
  progress(p: Progress, started: number): void;
  /** Show where the movement ended, with `phase` as its state. */
  end(p: Progress, phase: string | undefined, started: number): void;
  /** Take the bar down. */
  stop(): void;
}

/** The display of the movement `title` on `out`. */
function movementDisplay(title: string, out: NodeJS.WriteStream): MovementDisplay {
  const bar =
    out.isTTY === true
      ? new cliProgress.SingleBar(
          {
            format: `${title} {bar} {percentage}% | {value}/{total} ranges | {keys} keys | {size} | {rate}/s | ETA {eta_formatted} | {phase}`,
            hideCursor: true,
            etaBuffer: 20,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let lastLine = 0;
  return {
    start: () => bar?.start(1, 0, { keys: 0, size: '0 B', rate: '0 B', phase: 'starting' }),
    progress(p, started) {
      const rate = p.bytes / Math.max(1, (Date.now() - started) / 1000);
      const payload = { keys: p.keys, size: formatBytes(p.bytes), rate: formatBytes(Math.round(rate)), phase: p.phase };
      if (bar) {
        bar.setTotal(Math.max(1, p.total));
        bar.update(p.done, payload);
      } else if (Date.now() - lastLine >= 2000) {
        lastLine = Date.now();
        out.write(
          `${title}: ${p.done}/${p.total} ranges, ${p.keys} keys, ${payload.size} (${payload.rate}/s), ${p.phase}\n`,
        );
      }
    },
    // Without a bar, the lines come every 2 s: the last one may be well short of the end.
    end(p, phase, started) {
      if (bar) {
        bar.setTotal(Math.max(1, p.total));
        bar.update(p.done, { keys: p.keys, size: formatBytes(p.bytes), phase });
      } else
        out.write(
          `${title}: ${p.done}/${p.total} ranges, ${p.keys} keys, ${formatBytes(p.bytes)} in ${Math.round((Date.now() - started) / 1000)} s, ${phase}\n`,
        );
    },
    stop: () => bar?.stop(),
  };
}

/** `ringkv transfers`: what every member pulls, sends and drives. */
export function formatTransfers(
  replies: readonly TransfersReply[],
  unreachable: readonly string[],
  now = Date.now(),
): string {
  const lines: string[] = [];
  const movements = [...new Set(replies.flatMap((r) => r.movements))];
  lines.push(movements.length === 0 ? 'No topology change in progress.' : `In progress: ${movements.join('; ')}`);
  // One line per pull in progress: ranges, keys, bytes, rate and ETA (by the share of the token space left).
  for (const r of replies) {
    for (const p of r.pulls) {
      if (p.finishedAtMs !== 0) continue;
      const done = p.ranges.filter((x) => x.state === 'done');
      const keys = p.ranges.reduce((s, x) => s + x.keys, 0);
      const bytes = p.ranges.reduce((s, x) => s + x.bytes, 0);
      const total = p.ranges.reduce((s, x) => s + x.share, 0);
      const shareDone = done.reduce((s, x) => s + x.share, 0);
      const secs = Math.max(1, (now - p.startedAtMs) / 1000);
      const eta = shareDone > 0 ? Math.round((secs * (total - shareDone)) / shareDone) : undefined;
      lines.push(
        `${r.nodeId} pulls for ${p.requestedBy === r.nodeId ? 'its join' : `${p.requestedBy}'s change`}: ${done.length}/${p.ranges.length} ranges, ${keys} keys, ${formatBytes(bytes)} at ${formatBytes(Math.round(bytes / secs))}/s, ETA ${eta === undefined ? '?' : `${eta} s`}`,
      );
    }
  }
  // Active and failed ranges row by row; waiting ones are only counted (a join has hundreds).
  const rows: string[][] = [['Node', 'Direction', 'Range (start, end]', 'Peer', 'State', 'Keys', 'Bytes']];
  let waiting = 0;
  for (const r of replies) {
    for (const p of r.pulls) {
      if (p.finishedAtMs !== 0 && p.ranges.every((x) => x.state === 'done')) continue;
      for (const x of p.ranges) {
        if (x.state === 'done') continue;
        if (x.state === 'waiting') {
          waiting++;
          continue;
        }
        rows.push([
          r.nodeId,
          'in',
          `${x.start} ${x.end}`,
          x.peer + (x.fallbackSource ? ' (leaver down)' : ''),
          x.state + (x.error ? `: ${x.error}` : ''),
          String(x.keys),
          formatBytes(x.bytes),
        ]);
      }
    }
    for (const x of r.outgoing)
      rows.push([r.nodeId, 'out', `${x.start} ${x.end}`, x.peer, 'active', String(x.keys), formatBytes(x.bytes)]);
  }
  if (rows.length > 1 || waiting > 0) lines.push(`Ranges streaming now (${waiting} more waiting):`);
  if (rows.length > 1) {
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
    for (const row of rows)
      lines.push(
        row
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd(),
      );
  }
  for (const r of replies) {
    const d = r.drive;
    if (d === null || d.phase === 'left' || d.phase === 'removed') continue;
    const done = d.gainers.filter((g) => g.state === 'done').length;
    lines.push(
      `${r.nodeId} drives the ${d.kind} of ${d.node} (${d.phase}): ${done}/${d.gainers.length} nodes that gain ranges have them`,
    );
  }
  if (unreachable.length > 0) lines.push(`Not answering: ${unreachable.join(', ')}`);
  return lines.join('\n');
}

/** `ringkv plan`: the staged changes, what each would move, and ownership before and after. */
export function formatPlan(p: PlanReply): string {
  if (p.steps.length === 0) return 'Nothing is staged. Stage changes with ringkv plan join|leave|remove ID ...';
  const lines: string[] = [];
  p.steps.forEach((s, i) => {
    const what =
      s.change.kind === 'join'
        ? `${s.change.node} joins`
        : s.change.kind === 'leave'
          ? `${s.change.node} leaves (decommission)`
          : `${s.change.node} is removed`;
    lines.push(`${i + 1}. ${what}${s.state === 'staged' ? '' : ` [${s.state}${s.error ? `: ${s.error}` : ''}]`}`);
    for (const m of s.moves)
      lines.push(
        `     ${m.from} -> ${m.to}: ${m.ranges} ranges, ${(m.share * 100).toFixed(1)}% of the keys, ~${m.keys} keys, ~${formatBytes(m.bytes)}`,
      );
  });
  if (p.ownership.length > 0) {
    lines.push('', `Ownership (effective, N=${p.replicas}):`);
    const rows = [['Node', 'Before', 'After']];
    for (const o of p.ownership)
      rows.push([o.node, `${(o.before * 100).toFixed(1)}%`, `${(o.after * 100).toFixed(1)}%`]);
    const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows)
      lines.push(
        `  ${r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join('  ')
          .trimEnd()}`,
      );
  }
  lines.push(
    '',
    p.committing
      ? 'Committing: the steps run one after another.'
      : 'Nothing has changed yet: ringkv commit runs these steps, ringkv clear discards them.',
  );
  return lines.join('\n');
}

/** Follow a commit on `address` to its end: a bar of steps, the running one's ranges as a fraction. */
export async function followCommit(
  address: string,
  o: { everyMs?: number; out?: NodeJS.WriteStream } = {},
): Promise<PlanReply> {
  const out = o.out ?? process.stdout;
  const bar = out.isTTY
    ? new cliProgress.SingleBar(
        { format: 'commit {bar} {percentage}% | step {step} | {what}', hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const admin = new AdminClient(address, 3000, cliSecurity());
  let lastLine = '';
  try {
    let plan = await admin.plan();
    bar?.start(plan.steps.length, 0, { step: '', what: 'starting' });
    for (;;) {
      plan = await admin.plan();
      const i = plan.steps.findIndex((s) => s.state === 'running');
      const done = plan.steps.filter((s) => s.state === 'done').length;
      let fraction = 0;
      let what = i < 0 ? 'done' : `${plan.steps[i]!.change.kind} ${plan.steps[i]!.change.node}`;
      if (i >= 0) {
        const status = await admin.status().catch(() => undefined);
        const c = plan.steps[i]!.change;
        const who = c.kind === 'remove' ? status?.nodeId : c.node;
        const progress = status?.members.find((m) => m.id === who)?.progress ?? '';
        const [d, t] = progress.split('/').map(Number);
        if (t) fraction = d! / t;
        if (progress) what += ` (${progress} ranges)`;
      }
      bar?.update(done + fraction, { step: `${Math.min(plan.steps.length, done + 1)}/${plan.steps.length}`, what });
      if (!bar && what !== lastLine)
        out.write(`commit: step ${Math.min(plan.steps.length, done + 1)}/${plan.steps.length}: ${(lastLine = what)}\n`);
      if (!plan.committing) return plan;
      await new Promise((r) => setTimeout(r, o.everyMs ?? 500));
    }
  } finally {
    bar?.stop();
    admin.close();
  }
}

/** What a joiner that has not started streaming waits for: the other topology changes under way, as `view` shows them. */
export function busyWith(view: StatusReply, id: string): string {
  const others = view.members.filter((x) => x.id !== id && (x.status === 'joining' || x.status === 'leaving'));
  if (others.length > 0)
    return `one topology change at a time: ${others.map((x) => `${x.id} is ${x.status}`).join(', ')}`;
  return `no other change under way; its log's "joining: waiting" lines say what it waits for`;
}

/** Follow node `id`'s join (asking the node at `address`) until it is normal: a bar of the ranges it streams. */
export async function followJoin(
  address: string,
  id: string,
  o: { everyMs?: number; timeoutMs?: number; out?: NodeJS.WriteStream } = {},
): Promise<void> {
  const out = o.out ?? process.stdout;
  const bar = out.isTTY
    ? new cliProgress.SingleBar(
        { format: `join ${id} {bar} {percentage}% | {value}/{total} ranges | {what}`, hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const admin = new AdminClient(address, 2000, cliSecurity());
  const end = Date.now() + (o.timeoutMs ?? 3600_000);
  let last = '';
  try {
    bar?.start(1, 0, { what: 'starting' });
    for (;;) {
      const view = await admin.status().catch(() => undefined);
      const m = view?.members.find((x) => x.id === id);
      if (m?.status === 'normal') {
        bar?.update(bar.getTotal(), { what: 'normal' });
        return;
      }
      if (m?.status === 'left' || m?.status === 'removed')
        throw new Error(`${id} is ${m.status}: it will not join; start a new node with a new id and an empty data dir`);
      const [d, t] = (m?.progress ?? '').split('/').map(Number);
      const what =
        view === undefined
          ? 'not answering yet'
          : m === undefined
            ? 'starting'
            : m.progress
              ? 'streaming'
              : `waiting for its turn (${busyWith(view, id)})`;
      if (bar) {
        if (t) bar.setTotal(t);
        bar.update(d ?? 0, { what });
      } else {
        const line = `join ${id}: ${what}${m?.progress ? ` ${m.progress} ranges` : ''}`;
        if (line !== last) out.write(`${(last = line)}\n`);
      }
      if (Date.now() > end)
        throw new Error(
          `${id} has not joined after ${Math.round((o.timeoutMs ?? 3600_000) / 1000)} s; see its log and ringkv transfers`,
        );
      await new Promise((r) => setTimeout(r, o.everyMs ?? 500));
    }
  } finally {
    bar?.stop();
    admin.close();
  }
}

/** A repair's summary: ranges compared, leaves differing, keys and bytes exchanged, time. */
export function formatRepair(r: RepairStatusReply, now = Date.now()): string {
  const never = r.repaired.filter((x) => x.atMs === 0).length;
  const oldest = Math.min(...r.repaired.filter((x) => x.atMs > 0).map((x) => x.atMs));
  const history =
    r.repaired.length === 0
      ? ''
      : `\n  ranges this node replicates: ${r.repaired.length}; ${never === 0 ? 'all' : `${r.repaired.length - never}`} repaired since it started${Number.isFinite(oldest) ? `, the longest ago ${((now - oldest) / 1000).toFixed(0)} s ago` : ''}` +
        (never > 0 ? ` (tombstones past their grace period in the other ${never} wait for a repair)` : '');
  const bg = r.background;
  const background =
    bg !== undefined && bg.ranges + bg.failed > 0
      ? `\n  background repair since the node started: ${bg.ranges} ranges, ${bg.keysExchanged} keys exchanged, ${bg.bytes} bytes${bg.failed > 0 ? `, ${bg.failed} failed` : ''}`
      : '';
  if (r.id === '') return `no repair has run on this node since it started${history}${background}`;
  const ms = (r.finishedAtMs || now) - r.startedAtMs;
  const state = r.finishedAtMs
    ? `finished in ${(ms / 1000).toFixed(1)} s`
    : `running for ${(ms / 1000).toFixed(1)} s (now ${r.current})`;
  const lines = [
    `repair ${r.id}: ${state}`,
    `  ranges: ${r.done} of ${r.ranges} repaired (${r.identical} identical on every replica), ${r.skipped} skipped (a replica down), ${r.failed} failed`,
    `  leaves differing: ${r.leavesDiffering}; keys exchanged: ${r.keysExchanged}; bytes on the wire: ${r.bytes} (records ${r.recordBytes}${r.recordBytes > 0 ? `, ${(r.bytes / r.recordBytes).toFixed(2)}× them` : ''})`,
    `  ranges in sync: ${r.identical}; compared on kept trees: ${r.kept ?? 0} (the rest by scans); records read here: ${r.recordsRead ?? 0}`,
  ];
  if (r.lastProblem) lines.push(`  last problem: ${r.lastProblem}`);
  return lines.join('\n') + history + background;
}

/** Follow the repair on `address` to its end: a bar of ranges on a terminal, plain lines otherwise. */
export async function followRepair(
  address: string,
  o: { everyMs?: number; out?: NodeJS.WriteStream } = {},
): Promise<RepairStatusReply> {
  const out = o.out ?? process.stdout;
  const bar = out.isTTY
    ? new cliProgress.SingleBar(
        { format: 'repair {bar} {percentage}% | {value}/{total} ranges | {keys} keys exchanged', hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const admin = new AdminClient(address, 3000, cliSecurity());
  let last = -1;
  try {
    for (;;) {
      const r = await admin.repairStatus();
      const at = r.done + r.skipped + r.failed;
      if (bar) {
        if (bar.getTotal() !== r.ranges) bar.start(r.ranges, at, { keys: r.keysExchanged });
        bar.update(at, { keys: r.keysExchanged });
      } else if (at !== last && (r.finishedAtMs || at - last >= Math.max(1, Math.ceil(r.ranges / 10)))) {
        out.write(`repair: ${at}/${r.ranges} ranges, ${r.keysExchanged} keys exchanged\n`);
        last = at;
      }
      if (r.finishedAtMs) return r;
      await new Promise((res) => setTimeout(res, o.everyMs ?? 500));
    }
  } finally {
    bar?.stop();
    admin.close();
  }
}

/**
 * Follow a deleted bucket's purge (asking `admin`) until every member has deleted its
 * keys: a line each time a member is done, and every `quietMs` a line naming the members
 * still pending and which of them are down (a member that is down purges when it is back).
 */
export async function followPurge(
  admin: AdminClient,
  name: string,
  first: BucketDeletionInfo,
  out: NodeJS.WritableStream | undefined,
  o: { everyMs?: number; quietMs?: number } = {},
): Promise<BucketDeletionInfo> {
  let at = first;
  let shown = -1;
  let quietSince = Date.now();
  for (;;) {
    const total = at.purged.length + at.pending.length;
    if (at.purged.length !== shown) {
      out?.write(
        `purge of ${name}: ${at.purged.length}/${total} members done${at.pending.length > 0 ? ` (pending: ${at.pending.join(', ')})` : ''}\n`,
      );
      shown = at.purged.length;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= (o.quietMs ?? 10_000)) {
      const members = (await admin.status().catch(() => undefined))?.members ?? [];
      const down = at.pending.filter((id) => members.some((m) => m.id === id && !m.up));
      out?.write(
        `purge of ${name}: waiting for ${at.pending.join(', ')}${down.length > 0 ? ` (down: ${down.join(', ')}; a member purges when it is back, or remove it with ringkv removenode)` : ' (deleting its keys: a scan of every record it holds)'}\n`,
      );
      quietSince = Date.now();
    }
    if (at.pending.length === 0) {
      out?.write(`bucket ${name}: its keys are deleted on every member; the name can be used again\n`);
      return at;
    }
    await new Promise((r) => setTimeout(r, o.everyMs ?? 500));
    at = await admin.bucketDeletion(name);
  }
}
