/**
 * The compare-and-set register's record (src/kinds/register/register-record.ts, format 5), on fixed seeds:
 * states reached by the acceptor's own rules round-trip byte for byte; their join is
 * commutative, associative and idempotent on the bytes and never lowers a promise or a
 * commit; damaged bytes are refused with a DecodeError, never read as another state. The
 * register's steps' arguments and replies (register-steps.ts) round-trip the same way.
 * That joining states is safe for Paxos itself is test/property/paxos.property.test.ts's
 * (its network copies acceptors' states as anti-entropy would).
 */
import {
  DecodeError,
  EMPTY_ACCEPTOR,
  compareBallots,
  decodeRegister,
  encodeRegister,
  joinAcceptors,
  onCommit,
  onPrepare,
  onPropose,
  proposalOrder,
  sameRegister,
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  type RegisterState,
  type StepCodec,
} from '../../src/kinds/index.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

/** Up to 36 ballots: enough commits that a history fills (HISTORY_LENGTH) and drops its oldest. */
const ballotArb = fc.record({ n: fc.integer({ min: 1, max: 12 }), by: fc.constantFrom('n1', 'n2', 'n3') });
const valueArb = fc.option(
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
  { nil: null },
);
type Step =
  | { kind: 'prepare'; ballot: { n: number; by: string } }
  | { kind: 'propose' | 'commit'; ballot: { n: number; by: string }; value: Buffer | null };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('prepare' as const), ballot: ballotArb }),
  fc.record({ kind: fc.constantFrom('propose' as const, 'commit' as const), ballot: ballotArb, value: valueArb }),
);
/** A state one acceptor reaches by its rules. The value of a ballot is fixed by the ballot (one proposal per ballot), as Paxos makes it. */
const stateArb: fc.Arbitrary<RegisterState> = fc.array(stepArb, { maxLength: 24 }).map((steps) => {
  let s: RegisterState = EMPTY_ACCEPTOR;
  for (const st of steps) {
    if (st.kind === 'prepare') s = onPrepare(s, st.ballot).acceptor;
    else {
      // Some decided on an earlier commit (a base), some on a register never written (none).
      const base = st.ballot.n % 2 === 0 ? { base: `r${st.ballot.n - 1}.${st.ballot.by}` } : {};
      const p = {
        ballot: st.ballot,
        value: st.ballot.n % 3 === 0 ? null : Buffer.from(`v${st.ballot.n}${st.ballot.by}`),
        id: `r${st.ballot.n}.${st.ballot.by}`,
        ...base,
      };
      s = st.kind === 'propose' ? onPropose(s, p).acceptor : onCommit(s, p);
    }
  }
  return s;
});
const join = (a: RegisterState, b: RegisterState): RegisterState => joinAcceptors(a, b, proposalOrder);
const bytes = (s: RegisterState): string => encodeRegister(s).toString('hex');

describe('the register record', () => {
  it('round-trips every reachable state byte for byte, with and without a hint time', () => {
    fc.assert(
      fc.property(stateArb, fc.option(fc.nat(2 ** 40), { nil: undefined }), (s, held) => {
        const b = encodeRegister(s, held);
        const d = decodeRegister(b);
        expect(d.heldSince).toBe(held);
        expect(encodeRegister(d.register, d.heldSince).equals(b)).toBe(true);
        expect(bytes(d.register)).toBe(bytes(s));
      }),
      { seed: 5, numRuns: 500 },
    );
  });

  it('joins commutatively, associatively and idempotently, never lowering a promise or a commit, into a state that decodes', () => {
    fc.assert(
      fc.property(stateArb, stateArb, stateArb, (a, b, c) => {
        expect(bytes(join(a, b))).toBe(bytes(join(b, a)));
        expect(bytes(join(join(a, b), c))).toBe(bytes(join(a, join(b, c))));
        expect(bytes(join(a, a))).toBe(bytes(a));
        const j = join(a, b);
        for (const x of [a, b]) {
          expect(compareBallots(j.promised, x.promised)).toBeGreaterThanOrEqual(0);
          if (x.committed) expect(compareBallots(j.committed!.ballot, x.committed.ballot)).toBeGreaterThanOrEqual(0);
        }
        expect(bytes(decodeRegister(encodeRegister(j)).register)).toBe(bytes(j));
      }),
      { seed: 6, numRuns: 500 },
    );
  });

  it('calls two states the same exactly when their bytes are', () => {
    fc.assert(
      fc.property(stateArb, stateArb, (a, b) => {
        expect(sameRegister(a, decodeRegister(encodeRegister(a)).register)).toBe(true);
        expect(sameRegister(a, b)).toBe(bytes(a) === bytes(b));
        expect(sameRegister(a, join(a, b))).toBe(bytes(a) === bytes(join(a, b)));
      }),
      { seed: 8, numRuns: 500 },
    );
  });

  it('refuses damaged bytes with a DecodeError, never reading them as another state', () => {
    fc.assert(
      fc.property(stateArb, fc.nat(), fc.integer({ min: 1, max: 255 }), fc.boolean(), (s, at, flip, cut) => {
        const b = Buffer.from(encodeRegister(s));
        const i = at % b.length;
        const bad = cut ? b.subarray(0, i) : ((b[i]! ^= flip), b);
        expect(() => decodeRegister(bad)).toThrow(DecodeError);
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('refuses a state the rules cannot reach, and names no more than 255 characters', () => {
    const p = (n: number) => ({ ballot: { n, by: 'a' }, value: Buffer.from('v'), id: 'r' });
    // An accepted proposal at or below the commit, or above the promise, re-encoded with a good checksum.
    expect(() =>
      decodeRegister(encodeRegister({ promised: { n: 5, by: 'a' }, accepted: p(3), committed: p(4), history: [] })),
    ).toThrow(/at or below its commit/);
    expect(() =>
      decodeRegister(
        encodeRegister({ promised: { n: 2, by: 'a' }, accepted: p(3), committed: undefined, history: [] }),
      ),
    ).toThrow(/above its promise/);
    expect(() =>
      decodeRegister(
        encodeRegister({ promised: { n: 2, by: 'a' }, accepted: undefined, committed: p(3), history: [] }),
      ),
    ).toThrow(/commit above its promise/);
    expect(() =>
      encodeRegister({
        promised: { n: 1, by: 'x'.repeat(256) },
        accepted: undefined,
        committed: undefined,
        history: [],
      }),
    ).toThrow(RangeError);
  });
});

describe("the register's steps' bytes", () => {
  const proposalArb = fc
    .record({
      ballot: ballotArb,
      id: fc.constantFrom('r1', 'r2.n3', 'x'.repeat(255)),
      value: valueArb,
      base: fc.option(fc.constantFrom('r0', 'b'.repeat(255)), { nil: undefined }),
    })
    .map(({ base, ...p }) => (base === undefined ? p : { ...p, base }));
  /** `v` through `codec` and back; and every cut of its bytes refused with a DecodeError, as is a byte too many. */
  function roundTrips<T>(codec: StepCodec<T>, v: T): void {
    const b = codec.encode(v);
    expect(codec.decode(b)).toEqual(v);
    for (let cut = 0; cut < b.length; cut++) expect(() => codec.decode(b.subarray(0, cut))).toThrow(DecodeError);
    expect(() => codec.decode(Buffer.concat([b, Buffer.from([0])]))).toThrow(DecodeError);
  }

  it('carries ballots, proposals and every reply the rules give', () => {
    fc.assert(
      fc.property(stateArb, ballotArb, proposalArb, (s, b, p) => {
        roundTrips(PAXOS_PREPARE.arg, b);
        roundTrips(PAXOS_PROPOSE.arg, p);
        roundTrips(PAXOS_COMMIT.arg, p);
        roundTrips(PAXOS_PREPARE.reply, PAXOS_PREPARE.run(s, b).reply);
        roundTrips(PAXOS_PROPOSE.reply, PAXOS_PROPOSE.run(s, p).reply);
        roundTrips(PAXOS_COMMIT.reply, PAXOS_COMMIT.run(s, p).reply);
      }),
      { seed: 46, numRuns: 300 },
    );
  });

  it('refuses to send a ballot or proposal a replica would refuse (KV_BAD_OPTION)', () => {
    expect(() => PAXOS_PREPARE.arg.encode({ n: 0, by: 'n1' })).toThrow(/Paxos ballot/);
    expect(() => PAXOS_PROPOSE.arg.encode({ ballot: { n: 1, by: 'n1' }, id: '', value: null })).toThrow(
      /request by an id/,
    );
    expect(() => PAXOS_PROPOSE.arg.encode({ ballot: { n: 1, by: 'é'.repeat(256) }, id: 'r', value: null })).toThrow(
      /Paxos ballot/,
    );
  });
});
