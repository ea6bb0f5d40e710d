/**
 * The compare-and-set register as a kind of record: its acceptor's state, joined as
 * acceptor.ts says is safe for Paxos.
 *
 * Owns: the register's entry in the kinds' registry. Must not: do I/O.
 */
import type { JoinedKind } from '../record-kind.js';
import { REGISTER_FORMAT, kindName } from '../formats.js';
import {
  EMPTY_ACCEPTOR,
  decodeRegister,
  encodeRegister,
  joinAcceptors,
  proposalOrder,
  sameRegister,
  type RegisterState,
} from './acceptor.js';

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
};
