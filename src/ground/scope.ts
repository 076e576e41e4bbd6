/**
 * Who may see what: the keys every read of memory, skills, history, snapshots and deliveries takes.
 * The queries put a scope's fields in their WHERE clause; the prompt never enforces anything.
 *
 * A scope is branded: only `src/db/scopes.ts` can make one, from stored rows (a workspace, person
 * or conversation found through the place a message came from), and only stores may import it
 * (the dependency rules in .dependency-cruiser.cjs). So an id from an adapter or the model cannot
 * pass as a scope; a literal `{ workspaceId }` does not compile where a scope is asked for.
 */
declare const fromStoredRows: unique symbol;

/** The brand: a property no code can name outside this declaration. */
export interface StoredRows {
  readonly [fromStoredRows]: true;
}

/** A workspace: reads made where no person or conversation is known (a reaction's delivery, a job). */
export interface WorkspaceScope extends StoredRows {
  readonly workspaceId: string;
}

/** A person in their workspace: what they own wherever they are (pending entries, their messages). */
export interface PersonScope extends WorkspaceScope {
  readonly personId: string;
}

/** A conversation in its workspace: its sessions, messages and replies. */
export interface ConversationScope extends WorkspaceScope {
  readonly conversationId: string;
}

/** Who is asking, where: built once per inbound message from its stored place. */
export interface Scope extends PersonScope, ConversationScope {
  /** Platform channel id; channel-scoped memory is keyed by it. */
  readonly channelKey: string;
  readonly isDm: boolean;
}
