/**
 * The checkers: pure functions of the history the workloads recorded and the final reads.
 * Jepsen's rules: an acknowledged write must survive; a failed or timed-out write is an
 * unknown outcome, allowed to be present or absent; nothing may appear that nobody wrote.
 */

export type Outcome = 'ok' | 'fail' | 'unknown';

/** One client operation, for availability and the timeline. Times are ms from the workload's start. */
export interface Op {
  readonly workload: 'set' | 'register' | 'expiry' | 'counter' | 'orset' | 'map' | 'cas';
  readonly startMs: number;
  readonly endMs: number;
  readonly outcome: Outcome;
  /** The gRPC status name of a failure. */
  readonly code?: string;
}

export interface SetResult {
  readonly attempted: number;
  readonly acknowledged: number;
  /** Acknowledged, missing from the final reads. Must be empty. */
  readonly lost: string[];
  /** In the final reads, never attempted on that key. Must be empty. */
  readonly unexpected: string[];
  /** Outcome unknown (failed or timed out), yet present. */
  readonly recovered: number;
}

/**
 * The set checker. `attempted` maps each element to the key it was added to; `acked` the
 * elements whose add was acknowledged; `final` each key's elements, the union of the
 * final read's siblings.
 */
export function checkSet(
  attempted: ReadonlyMap<string, string>,
  acked: ReadonlySet<string>,
  final: ReadonlyMap<string, ReadonlySet<string>>,
): SetResult {
  const present = new Set<string>();
  const unexpected: string[] = [];
  for (const [key, elements] of final) {
    for (const e of elements) {
      if (attempted.get(e) === key) present.add(e);
      else unexpected.push(`${key}:${e}`);
    }
  }
  const lost = [...acked].filter((e) => !present.has(e)).map((e) => `${attempted.get(e)}:${e}`);
  let recovered = 0;
  for (const e of present) if (!acked.has(e)) recovered++;
  return { attempted: attempted.size, acknowledged: acked.size, lost, unexpected, recovered };
}

/** A register write: its key, whether it was acknowledged, and the values its read saw (a write with context supersedes exactly those). */
export interface RegisterWrite {
  readonly key: string;
  readonly acked: boolean;
  /** The values the causal context covered; empty for a blind write. */
  readonly observed: readonly string[];
}

export interface RegisterResult {
  readonly keys: number;
  readonly writes: number;
  readonly acknowledged: number;
  /** Acknowledged, neither in the final siblings nor superseded by a write that is. Must be empty. */
  readonly lost: string[];
  /** In the final siblings, never written to that key. Must be empty. */
  readonly unexpected: string[];
  /** Acknowledged and absent, but superseded by a causal successor that is present. */
  readonly superseded: number;
}

/**
 * The register checker: after healing, each key's final siblings hold every acknowledged
 * write to it, or a causal successor of it — a write whose context covered it, directly or
 * through other writes. A lost update is an acknowledged write that nothing present
 * descends from; it must never happen, whatever the faults.
 */
export function checkRegister(
  writes: ReadonlyMap<string, RegisterWrite>,
  final: ReadonlyMap<string, readonly string[]>,
): RegisterResult {
  const unexpected: string[] = [];
  const covered = new Set<string>();
  const present = new Set<string>();
  for (const [key, values] of final) {
    const stack: string[] = [];
    for (const v of values) {
      if (writes.get(v)?.key !== key) unexpected.push(`${key}=${v}`);
      else (stack.push(v), present.add(v));
    }
    // Everything a present value descends from is covered.
    while (stack.length > 0) {
      const v = stack.pop()!;
      if (covered.has(v)) continue;
      covered.add(v);
      for (const o of writes.get(v)?.observed ?? []) if (writes.get(o)?.key === key) stack.push(o);
    }
  }
  const lost: string[] = [];
  let acknowledged = 0,
    superseded = 0;
  for (const [v, w] of writes) {
    if (!w.acked) continue;
    acknowledged++;
    if (!covered.has(v)) lost.push(`${w.key}=${v}`);
    else if (!present.has(v)) superseded++;
  }
  return { keys: final.size, writes: writes.size, acknowledged, lost, unexpected, superseded };
}

/** A fault as it happened: when it was applied and healed, ms from the workload's start. */
export interface Window {
  readonly kind: string;
  /** A partition's or a slow fault's shape (impact is reported per shape too). */
  readonly shape?: string;
  readonly label: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface WindowAvailability {
  readonly kind: string;
  readonly label: string;
  readonly ops: number;
  /** Fraction of operations started while the fault was active that succeeded. */
  readonly during: number;
  /** The same for operations started in the `afterMs` after the heal, outside any other fault's window; undefined when there were none (another fault covered that time). */
  readonly after: number | undefined;
  /** From the heal to the start of the first second in which every operation (outside other faults) succeeded; undefined if none did, or `after` is undefined. */
  readonly recoveredInMs: number | undefined;
}

export interface Availability {
  /** Over the whole workload. */
  readonly overall: number;
  /** Outside every fault window. */
  readonly quiet: number;
  readonly windows: WindowAvailability[];
  /**
   * Per kind: operations-weighted fractions during and after, and the slowest recovery
   * among the faults whose aftermath could be measured (`measured` of them; undefined if
   * one of those never recovered within the time after).
   */
  readonly byKind: Record<
    string,
    { faults: number; measured: number; during: number; after: number | undefined; worstRecoveryMs: number | undefined }
  >;
}

function fraction(ops: readonly Op[]): number {
  return ops.length === 0 ? 1 : ops.filter((o) => o.outcome === 'ok').length / ops.length;
}

function fractionOrNone(ops: readonly Op[]): number | undefined {
  return ops.length === 0 ? undefined : fraction(ops);
}

/** The availability the clients saw: per fault window, after each heal, and per kind. */
export function availability(ops: readonly Op[], windows: readonly Window[], afterMs: number): Availability {
  const sorted = [...ops].sort((a, b) => a.startMs - b.startMs);
  const between = (from: number, to: number): Op[] => {
    let lo = 0,
      hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]!.startMs < from) lo = mid + 1;
      else hi = mid;
    }
    const out: Op[] = [];
    for (let i = lo; i < sorted.length && sorted[i]!.startMs < to; i++) out.push(sorted[i]!);
    return out;
  };
  // After a heal, only operations outside every other fault's window count: the next
  // fault may start within the seconds after, and membership changes overlap the rest.
  const quietAfter = (w: Window, from: number, to: number): Op[] =>
    between(from, to).filter((o) => !windows.some((x) => x !== w && o.startMs >= x.startMs && o.startMs < x.endMs));
  const result: WindowAvailability[] = windows.map((w) => {
    const during = between(w.startMs, w.endMs),
      after = quietAfter(w, w.endMs, w.endMs + afterMs);
    let recoveredInMs: number | undefined;
    for (let t = w.endMs; t < w.endMs + afterMs; t += 250) {
      const second = quietAfter(w, t, t + 1000);
      if (second.length > 0 && second.every((o) => o.outcome === 'ok')) {
        recoveredInMs = t - w.endMs;
        break;
      }
    }
    return {
      kind: w.kind,
      label: w.label,
      ops: during.length,
      during: fraction(during),
      after: fractionOrNone(after),
      recoveredInMs,
    };
  });
  const byKind: Availability['byKind'] = {};
  for (const kind of new Set(windows.map((w) => w.kind))) {
    const ws = windows.filter((w) => w.kind === kind);
    const measured = result.filter((r) => r.kind === kind && r.after !== undefined);
    const recoveries = measured.map((r) => r.recoveredInMs);
    byKind[kind] = {
      faults: ws.length,
      measured: measured.length,
      during: fraction(ws.flatMap((w) => between(w.startMs, w.endMs))),
      after: fractionOrNone(ws.flatMap((w) => quietAfter(w, w.endMs, w.endMs + afterMs))),
      worstRecoveryMs:
        recoveries.includes(undefined) || measured.length === 0 ? undefined : Math.max(0, ...(recoveries as number[])),
    };
  }
  const inWindow = (o: Op): boolean => windows.some((w) => o.startMs >= w.startMs && o.startMs < w.endMs);
  return { overall: fraction(sorted), quiet: fraction(sorted.filter((o) => !inWindow(o))), windows: result, byKind };
}

/** What the clients got while a kind of fault was active, and ÷ what they got with none active. */
export interface Impact {
  readonly faults: number;
  /** Time with at least one fault of this kind active, s. */
  readonly seconds: number;
  /** Operations started in that time. */
  readonly ops: number;
  /** Operations started in that time that succeeded, per second of it. */
  readonly okPerSec: number;
  /** okPerSec ÷ the quiet okPerSec; undefined when either time is empty. */
  readonly throughput: number | undefined;
  /** The 99th percentile of the operations' latency (every outcome: what the caller waited), ms; undefined with no operations. */
  readonly p99Ms: number | undefined;
  /** p99Ms ÷ the quiet p99Ms. */
  readonly p99: number | undefined;
  /** Operations started in that time that failed or whose outcome is unknown. */
  readonly failed: number;
}

export interface FaultImpact {
  /** With no fault active (outside every window), over the workload. */
  readonly quiet: {
    readonly seconds: number;
    readonly ops: number;
    readonly okPerSec: number;
    readonly p99Ms: number | undefined;
    readonly failed: number;
  };
  /** Per kind, and per `kind:shape` for partitions and slow faults. */
  readonly byKind: Record<string, Impact>;
}

/** The nearest-rank percentile of `xs` (sorted here), undefined when empty. */
export function percentile(xs: readonly number[], p: number): number | undefined {
  if (xs.length === 0) return undefined;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The union of [start, end) intervals clipped to [0, endMs): sorted, disjoint. */
function union(spans: readonly (readonly [number, number])[], endMs: number): [number, number][] {
  const sorted = spans
    .map(([a, b]): [number, number] => [Math.max(0, a), Math.min(endMs, b)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * Throughput and tail latency per kind of fault against the quiet time: for each kind
 * (and each partition or slow shape), operations started while one of its faults was
 * active that succeeded per second of that time ÷ the same with no fault active, the p99
 * latency of the operations started then ÷ the quiet p99, and how many failed. An
 * operation counts where it started, like availability; `endMs` is the workload's length.
 */
export function faultImpact(ops: readonly Op[], windows: readonly Window[], endMs: number): FaultImpact {
  const inside = (spans: readonly [number, number][], t: number): boolean => spans.some(([a, b]) => t >= a && t < b);
  const length = (spans: readonly [number, number][]): number => spans.reduce((s, [a, b]) => s + (b - a), 0);
  const measure = (spans: [number, number][], picked: readonly Op[]) => {
    const seconds = length(spans) / 1000;
    const ok = picked.filter((o) => o.outcome === 'ok').length;
    return {
      seconds,
      ops: picked.length,
      okPerSec: seconds > 0 ? ok / seconds : 0,
      p99Ms: percentile(
        picked.map((o) => o.endMs - o.startMs),
        99,
      ),
      failed: picked.length - ok,
    };
  };
  const started = ops.filter((o) => o.startMs >= 0 && o.startMs < endMs);
  const all = union(
    windows.map((w) => [w.startMs, w.endMs]),
    endMs,
  );
  const quietSpans: [number, number][] = [];
  let at = 0;
  for (const [a, b] of all) (a > at && quietSpans.push([at, a]), (at = b));
  if (at < endMs) quietSpans.push([at, endMs]);
  const quiet = measure(
    quietSpans,
    started.filter((o) => !inside(all, o.startMs)),
  );
  const keys = new Map<string, Window[]>();
  for (const w of windows) {
    for (const k of w.shape === undefined ? [w.kind] : [w.kind, `${w.kind}:${w.shape}`])
      keys.set(k, [...(keys.get(k) ?? []), w]);
  }
  const byKind: Record<string, Impact> = {};
  for (const [k, ws] of keys) {
    const spans = union(
      ws.map((w) => [w.startMs, w.endMs]),
      endMs,
    );
    const m = measure(
      spans,
      started.filter((o) => inside(spans, o.startMs)),
    );
    byKind[k] = {
      faults: ws.length,
      ...m,
      throughput: m.seconds > 0 && quiet.seconds > 0 && quiet.okPerSec > 0 ? m.okPerSec / quiet.okPerSec : undefined,
      p99: m.p99Ms !== undefined && quiet.p99Ms !== undefined && quiet.p99Ms > 0 ? m.p99Ms / quiet.p99Ms : undefined,
    };
  }
  return { quiet, byKind };
}

/** A node's clock offset set by the nemesis: asked at `fromMs`, in force by `toMs` (history ms). */
export interface OffsetChange {
  readonly id: string;
  readonly offsetMs: number;
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The highest and lowest clock offset any node may have had at some time in [a, b]
 * (history ms): each change may have taken effect anywhere between when it was asked and
 * when its call returned, and every node starts at 0.
 */
export function offsetRange(changes: readonly OffsetChange[], a: number, b: number): { max: number; min: number } {
  let max = 0,
    min = 0;
  const byNode = new Map<string, OffsetChange[]>();
  for (const c of changes) (byNode.get(c.id) ?? byNode.set(c.id, []).get(c.id)!).push(c);
  for (const list of byNode.values()) {
    list.sort((x, y) => x.fromMs - y.fromMs);
    // The node's initial 0 may be in force until its first change is.
    const spans = [
      { offsetMs: 0, from: -Infinity, to: list[0]!.toMs },
      ...list.map((c, i) => ({ offsetMs: c.offsetMs, from: c.fromMs, to: list[i + 1]?.toMs ?? Infinity })),
    ];
    for (const s of spans)
      if (s.from <= b && s.to >= a) ((max = Math.max(max, s.offsetMs)), (min = Math.min(min, s.offsetMs)));
  }
  return { max, min };
}

/** A write of the expiry workload: a unique value with a TTL, by its coordinator's clock. */
export interface ExpiryWrite {
  readonly key: string;
  readonly ttlMs: number;
  readonly startMs: number;
  endMs: number;
  acked: boolean;
}

/** A read of the expiry workload (or the final read): what one get of a key returned, and when. */
export interface ExpiryRead {
  readonly key: string;
  readonly values: readonly string[];
  readonly startMs: number;
  readonly endMs: number;
}

export interface ExpiryResult {
  readonly writes: number;
  readonly acknowledged: number;
  readonly reads: number;
  /** Reads that showed an acknowledged value (those the bound can judge). */
  readonly judged: number;
  /** Reads of a value that began after its expiry plus the skew bound. Must be 0. */
  readonly late: number;
  /** The first 50 of them. */
  readonly lateReads: { value: string; key: string; readAtMs: number; boundMs: number }[];
  /** Values read that nobody wrote to that key. Must be empty. */
  readonly unexpected: string[];
  /** The largest skew bound any judged read got, ms (what the clock nemesis allowed). */
  readonly maxSkewMs: number;
}

/**
 * The expiry checker (docs/reads-and-writes.md#expiry): a value written with TTL t and
 * acknowledged by `endMs` took its expiry from its coordinator's clock no later than
 * then, so no read may show it once true time passes `endMs + t + skew`, where skew is
 * the highest offset any node's clock may have had while the write ran, less the lowest
 * any may have had while the read ran (the reading coordinator's). A read that began past
 * that bound and showed the value is a violation, whether the value was late to go or came
 * back after it went (repair, a hint, a stream, a restarted replica). Writes whose outcome
 * is unknown are not judged: their expiry may have been taken later, when a delayed
 * request finally ran.
 */
export function checkExpiry(
  writes: ReadonlyMap<string, ExpiryWrite>,
  reads: readonly ExpiryRead[],
  offsets: readonly OffsetChange[],
): ExpiryResult {
  const lateReads: ExpiryResult['lateReads'] = [];
  const unexpected = new Set<string>();
  let judged = 0,
    maxSkewMs = 0;
  for (const r of reads) {
    for (const value of r.values) {
      const w = writes.get(value);
      if (w === undefined || w.key !== r.key) {
        unexpected.add(`${r.key}=${value}`);
        continue;
      }
      if (!w.acked) continue;
      judged++;
      const skew = Math.max(
        0,
        offsetRange(offsets, w.startMs, w.endMs).max - offsetRange(offsets, r.startMs, r.endMs).min,
      );
      maxSkewMs = Math.max(maxSkewMs, skew);
      const boundMs = w.endMs + w.ttlMs + skew;
      if (r.startMs > boundMs)
        lateReads.push({ value, key: r.key, readAtMs: Math.round(r.startMs), boundMs: Math.round(boundMs) });
    }
  }
  const acknowledged = [...writes.values()].filter((w) => w.acked).length;
  return {
    writes: writes.size,
    acknowledged,
    reads: reads.length,
    judged,
    late: lateReads.length,
    lateReads: lateReads.slice(0, 50),
    unexpected: [...unexpected].slice(0, 50),
    maxSkewMs,
  };
}

/** An increment of the counter workload (amounts are positive): its outcome once every attempt with its request id is done. */
export interface CounterIncrement {
  readonly key: string;
  readonly amount: number;
  readonly startMs: number;
  endMs: number;
  outcome: Outcome;
}

/** A read of the counter workload: the value one read of a key returned, and when. */
export interface CounterRead {
  readonly key: string;
  readonly value: bigint;
  readonly startMs: number;
  readonly endMs: number;
}

export interface CounterResult {
  readonly keys: number;
  readonly increments: number;
  readonly acknowledged: number;
  readonly reads: number;
  /** Keys whose final value is below the sum of their acknowledged increments: an increment lost. Must be empty. */
  readonly lost: string[];
  /** Keys whose final value is above the sum of every increment attempted (acknowledged or not): one counted twice. Must be empty. */
  readonly doubled: string[];
  /** Reads during the run below 0 or above every increment invoked before the read ended. Must be empty. */
  readonly badReads: string[];
  /** Increments whose outcome was unknown that the final values show applied (at least this many units). */
  readonly unknownApplied: number;
}

/**
 * The counter checker (Jepsen's for Riak's counters, made exact by idempotent
 * increments). Every increment adds a positive amount, and a failed or timed-out one is
 * retried with its request id until it is acknowledged or the run ends, so it applies at
 * most once: the final value of each key must lie between the sum of its acknowledged
 * increments (below: one was lost) and the sum of every increment tried (above: one was
 * counted twice). A read during the run is not linearizable (a quorum read can miss a
 * write a sloppy quorum took), but it can never exceed what was invoked before it ended,
 * nor go below zero.
 */
export function checkCounter(
  increments: readonly CounterIncrement[],
  reads: readonly CounterRead[],
  final: ReadonlyMap<string, bigint>,
): CounterResult {
  const byKey = new Map<string, { ok: bigint; all: bigint }>();
  for (const i of increments) {
    const k = byKey.get(i.key) ?? byKey.set(i.key, { ok: 0n, all: 0n }).get(i.key)!;
    k.all += BigInt(i.amount);
    if (i.outcome === 'ok') k.ok += BigInt(i.amount);
  }
  const lost: string[] = [],
    doubled: string[] = [],
    badReads: string[] = [];
  let unknownApplied = 0n;
  for (const [key, sums] of byKey) {
    const v = final.get(key) ?? 0n;
    if (v < sums.ok) lost.push(`${key}: final ${v} < ${sums.ok} acknowledged`);
    else if (v > sums.all) doubled.push(`${key}: final ${v} > ${sums.all} attempted`);
    else unknownApplied += v - sums.ok;
  }
  for (const [key, v] of final) if (!byKey.has(key) && v !== 0n) doubled.push(`${key}: final ${v}, never incremented`);
  const invoked = [...increments].sort((a, b) => a.startMs - b.startMs);
  for (const r of reads) {
    let bound = 0n;
    for (const i of invoked) {
      if (i.startMs > r.endMs) break;
      if (i.key === r.key) bound += BigInt(i.amount);
    }
    if (r.value < 0n || r.value > bound)
      badReads.push(
        `${r.key} read ${r.value} at ${Math.round(r.startMs)}-${Math.round(r.endMs)} ms; at most ${bound} was invoked by then`,
      );
  }
  return {
    keys: byKey.size,
    increments: increments.length,
    acknowledged: increments.filter((i) => i.outcome === 'ok').length,
    reads: reads.length,
    lost: lost.slice(0, 50),
    doubled: doubled.slice(0, 50),
    badReads: badReads.slice(0, 50),
    unknownApplied: Number(unknownApplied),
  };
}

/** An element of the orset workload: added to one key once, and perhaps removed once after its add was acknowledged. */
export interface OrSetElement {
  readonly key: string;
  add: Outcome;
  /** undefined: never removed. */
  remove: Outcome | undefined;
}

export interface OrSetResult {
  readonly elements: number;
  readonly acknowledged: number;
  readonly removed: number;
  /** Added and acknowledged, never removed, missing from the final read. Must be empty. */
  readonly lost: string[];
  /** Removed and acknowledged, yet in the final read (the remove saw the element's only add, so nothing may bring it back). Must be empty. */
  readonly resurrected: string[];
  /** In the final read, never added to that key. Must be empty. */
  readonly unexpected: string[];
}

/**
 * The observed-remove set checker. Each element is added once, to one key; a remove
 * carries the context of a read that showed the element, so it supersedes exactly that
 * add: an acknowledged add never removed must be in the final read, an acknowledged
 * remove must not be, and nothing nobody added may appear. Unknown outcomes may go
 * either way.
 */
export function checkOrSet(
  elements: ReadonlyMap<string, OrSetElement>,
  final: ReadonlyMap<string, ReadonlySet<string>>,
): OrSetResult {
  const lost: string[] = [],
    resurrected: string[] = [],
    unexpected: string[] = [];
  for (const [key, present] of final) {
    for (const e of present) {
      const el = elements.get(e);
      if (el === undefined || el.key !== key) unexpected.push(`${key}:${e}`);
      else if (el.remove === 'ok') resurrected.push(`${key}:${e}`);
    }
  }
  for (const [e, el] of elements)
    if (el.add === 'ok' && el.remove === undefined && !final.get(el.key)?.has(e)) lost.push(`${el.key}:${e}`);
  const all = [...elements.values()];
  return {
    elements: elements.size,
    acknowledged: all.filter((e) => e.add === 'ok').length,
    removed: all.filter((e) => e.remove === 'ok').length,
    lost: lost.slice(0, 50),
    resurrected: resurrected.slice(0, 50),
    unexpected: unexpected.slice(0, 50),
  };
}

/** One update of the map workload: to one key, an increment of `amount`, an add of the unique `element`, and `element` assigned to the register. */
export interface MapRequest {
  readonly key: string;
  readonly amount: number;
  readonly element: string;
  outcome: Outcome;
}

/** A map as the final read shows it: the counter, the set field's elements, the register (undefined: none). */
export interface MapFinal {
  readonly counter: bigint;
  readonly elements: ReadonlySet<string>;
  readonly last: string | undefined;
}

export interface MapResult {
  readonly keys: number;
  readonly requests: number;
  readonly acknowledged: number;
  /** Acknowledged updates whose element is missing. Must be empty. */
  readonly lost: string[];
  /** Keys whose counter is not the sum of the updates its set shows applied: an update applied in part, or an increment counted twice. Must be empty. */
  readonly torn: string[];
  /** Elements nobody added to that key, and registers holding a value of no applied update. Must be empty. */
  readonly unexpected: string[];
}

/**
 * The map checker. Each update names a unique element and applies its three ops in one
 * write batch, at most once (retried with its request id), so the final read of each key
 * says exactly which updates applied: those whose element its set holds. Then its
 * counter must be the sum of their amounts, exactly (less: an increment lost or applied
 * without its add; more: one counted twice or applied without its add); every
 * acknowledged update's element must be there; and the register must hold one of their
 * elements (none when none applied).
 */
export function checkMap(requests: readonly MapRequest[], final: ReadonlyMap<string, MapFinal>): MapResult {
  const lost: string[] = [],
    torn: string[] = [],
    unexpected: string[] = [];
  const byElement = new Map(requests.map((r) => [r.element, r]));
  for (const [key, m] of final) {
    let sum = 0n;
    for (const e of m.elements) {
      const r = byElement.get(e);
      if (r === undefined || r.key !== key) unexpected.push(`${key}: element ${e}`);
      else sum += BigInt(r.amount);
    }
    if (m.counter !== sum)
      torn.push(
        `${key}: counter ${m.counter}, but the ${m.elements.size} updates its set shows applied add up to ${sum}`,
      );
    if (m.last !== undefined ? !m.elements.has(m.last) : m.elements.size > 0)
      unexpected.push(`${key}: register ${m.last ?? '(none)'} is no applied update's`);
  }
  for (const r of requests)
    if (r.outcome === 'ok' && !final.get(r.key)?.elements.has(r.element)) lost.push(`${r.key}: ${r.element}`);
  return {
    keys: final.size,
    requests: requests.length,
    acknowledged: requests.filter((r) => r.outcome === 'ok').length,
    lost: lost.slice(0, 50),
    torn: torn.slice(0, 50),
    unexpected: unexpected.slice(0, 50),
  };
}
