/**
 * The compare-and-set register as a kind of record: its acceptor's state, joined as
 * acceptor.ts says is safe for Paxos, and its Paxos steps (register-steps.ts).
 *
 * Owns: the register's entry in the kinds' registry. Must not: do I/O.
 */
import type { JoinedKind } from '../record-kind.js';
import { REGISTER_FORMAT, kindName } from '../formats.js';
import { EMPTY_ACCEPTOR, joinAcceptors, proposalOrder, sameRegister, type RegisterState } from './acceptor.js';
import { decodeRegister, encodeRegister } from './register-record.js';
import { PAXOS_COMMIT, PAXOS_PREPARE, PAXOS_PROPOSE } from './register-steps.js';

export const REGISTER: JoinedKind<RegisterState> = {
  name: kindName(REGISTER_FORMAT)!,
  format: REGISTER_FORMAT,
  decode: (bytes) => {
    const { register, heldSince } = decodeRegister(bytes);
    return { state: register, heldSince };
  },
  encode: encodeRegister,
  join: (a, b) => joinAcceptors(a, b, proposalOrder),
  same: sameRegister,
  empty: EMPTY_ACCEPTOR,
  steps: Object.fromEntries([PAXOS_PREPARE, PAXOS_PROPOSE, PAXOS_COMMIT].map((s) => [s.name, s])),
};
