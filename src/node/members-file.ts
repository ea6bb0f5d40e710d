/**
 * Keeping members.json in step with the member table the gossiper holds, so that a
 * restart starts from it (identity.ts's loadMembers): saved only when a member's
 * generation or a field changed, not on heartbeats, and one save at a time.
 *
 * Owns: when to save, and what was saved last. Must not: define the file's format
 * (identity.ts's saveMembers does) or change the member table.
 */
import type { Logger } from 'pino';
import type { EndpointState } from '../membership/endpoint.js';
import { saveMembers } from './identity.js';

export interface MembersFileDeps {
  readonly dataDir: string;
  /** This node's id: its own state is not saved (node.json is its record). */
  readonly id: string;
  /** The member table now. */
  states(): Iterable<EndpointState>;
  readonly log: Logger;
}

export class MembersFile {
  /** What the last save held: every other member's id, generation and highest field version. */
  #saved = '';
  #saving = false;

  constructor(private readonly deps: MembersFileDeps) {}

  /** Save the member table if it changed since the last save (a save runs in the background). */
  remember(): void {
    if (this.#saving) return;
    const others = [...this.deps.states()].filter((st) => st.id !== this.deps.id);
    const key = others
      .map((st) => `${st.id}/${st.generation}/${[...st.fields.values()].reduce((m, f) => Math.max(m, f.version), 0)}`)
      .sort()
      .join(' ');
    if (key === this.#saved) return;
    this.#saving = true;
    saveMembers(this.deps.dataDir, others).then(
      () => {
        this.#saved = key;
        this.#saving = false;
      },
      (e: unknown) => {
        this.#saving = false;
        this.deps.log.warn({ err: e }, 'could not save members.json');
      },
    );
  }
}
