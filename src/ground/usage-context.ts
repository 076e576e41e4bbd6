/**
 * Which workspace the work under way is for, carried through async calls: a model call deep in a
 * turn, a review or a report is counted against the workspace it served (ops/usage-ledger.ts)
 * without every caller passing it down. Work outside any workspace (start-up checks) counts as "".
 */
import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<string>();

/** Runs `work` as work for `workspaceId`: model calls made inside it are counted there. */
export function forWorkspace<T>(workspaceId: string, work: () => T): T {
  return current.run(workspaceId, work);
}

/** The workspace the current work is for, or "" outside any. */
export function currentWorkspace(): string {
  return current.getStore() ?? "";
}
