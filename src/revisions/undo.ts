/**
 * What undoing a revision does, from the revision alone: the exact text it replaced back (the
 * SKILL.md, a support file or an entry's text), or the status it changed back, or its flag or pin
 * cleared. The undo is itself a revision whose action names what it did, so it can be undone in
 * turn. Revisions of the confirmation and approval flows (propose, confirm, approve, promote, ...)
 * are not undone here: they have their own commands.
 */
export type Status = "active" | "stale" | "archived";

export type Undo =
  | {
      ok: true;
      /** The undo revision's action. */
      action: string;
      status?: Status;
      /** The text the revision replaced: SKILL.md or the entry's text. */
      text?: string;
      /** A support file's text before (null: the file did not exist). */
      file?: { path: string; content: string | null };
      clearFlag?: true;
      pinned?: boolean;
    }
  | { ok: false; why: string };

export interface RevisionLike {
  action: string;
  path: string | null;
  oldText: string | null;
  newText: string | null;
}

const STATUS_UNDO: Record<string, { status: Status; action: string }> = {
  archive: { status: "active", action: "restore" },
  restore: { status: "archived", action: "archive" },
  stale: { status: "active", action: "reactivate" },
  reactivate: { status: "stale", action: "stale" },
  create: { status: "archived", action: "archive" },
  add: { status: "archived", action: "archive" },
  // A contradiction settled (memory/conflict-store.ts): the entry it closed is back in force.
  supersede: { status: "active", action: "restore" },
  keep_old: { status: "active", action: "restore" },
};

const TEXT_ACTIONS = new Set(["edit", "patch", "merge", "replace", "rollback", "write_file", "remove_file"]);

export function undoOf(rev: RevisionLike): Undo {
  // A removal by the memory tool archives the entry; its text is still the entry's.
  if (rev.action === "remove" && rev.path === null) return { ok: true, action: "restore", status: "active" };
  const status = STATUS_UNDO[rev.action];
  if (status) return { ok: true, ...status };
  if (rev.action === "flag") return { ok: true, action: "unflag", clearFlag: true };
  if (rev.action === "pin" || rev.action === "unpin") return { ok: true, action: rev.action === "pin" ? "unpin" : "pin", pinned: rev.action === "unpin" };
  if (TEXT_ACTIONS.has(rev.action)) {
    if (rev.path !== null) return { ok: true, action: "rollback", file: { path: rev.path, content: rev.oldText } };
    // A replace with no new text is an entry replaced by a team rule (the approval flow).
    if (rev.oldText !== null && rev.newText !== null) return { ok: true, action: "rollback", text: rev.oldText };
  }
  return { ok: false, why: `a '${rev.action}' change belongs to confirmations and approvals (or changed nothing), so it is not rolled back here` };
}
