/**
 * A workspace's team persona and standing instructions (seed 003's SOUL and AGENTS files): how
 * cairn speaks there and what it must always do, set by the workspace's admins.
 *
 * - One per workspace; none means cairn's built-in guidance alone.
 * - Written like every stored text: scanned first (a threat is refused, a secret redacted), within
 *   its own character budget, each change a revision with who and why, so `/cairn history persona`
 *   lists them and `/cairn rollback` restores an earlier text.
 * - Read into the cached part of every prompt of its workspace, at the next session (the snapshot
 *   is frozen per session, as memory is); the text is checked again when read (scanStored).
 * Who may set it is the command's concern (admins only); this store takes any caller it is given.
 */
import type { Database, Db } from "../db/client.ts";
import { timeColumn } from "../db/direct.ts";
import type { Person, Persona } from "../db/generated/sqlite/client.ts";
import { writeRevision, type Provenance } from "../db/revisions.ts";
import type { WorkspaceScope } from "../ground/scope.ts";
import { RULES_VERSION, scanForWrite } from "../safety/scanner.ts";
import { SharedRead } from "../ground/cache/shared-read.ts";

export type { Persona } from "../db/generated/sqlite/client.ts";

export const DEFAULT_PERSONA_CHARS = 1500;

export class PersonaError extends Error {}

export type PersonaChange = { kind: "set"; persona: Persona; redacted: string[] } | { kind: "cleared" } | { kind: "unchanged" };

export class PersonaStore {
  private readonly db: Db;
  private readonly readSql: string;
  private readonly reads = new SharedRead<string, Persona | null>();

  constructor(
    private readonly database: Pick<Database, "prisma" | "direct" | "provider">,
    readonly limit: number = DEFAULT_PERSONA_CHARS,
  ) {
    this.db = database.prisma;
    const pg = database.provider === "postgresql";
    const time = (c: string): string => timeColumn(database.provider, `"${c}"`);
    this.readSql = `SELECT "text", "updatedById", "scannedWith", ${time("createdAt")}, ${time("updatedAt")} FROM "Persona" WHERE "workspaceId" = ${pg ? "$1" : "?"}`;
  }

  /**
   * Read once per new session (not cached: one primary-key read then, and a write on another
   * replica reaches the next session here at once), below Prisma (db/direct.ts): every new
   * session's first turn sends it. Sessions that start together share a read that began after
   * each of them asked (SharedRead), so a burst of new sessions costs two reads, not one each.
   */
  get(scope: WorkspaceScope): Promise<Persona | null> {
    return this.reads.read(scope.workspaceId, () => this.read(scope));
  }

  private async read(scope: WorkspaceScope): Promise<Persona | null> {
    const [row] = await this.database.direct.rows(this.readSql, [scope.workspaceId]);
    if (!row) return null;
    const [text, updatedById, scannedWith, createdAt, updatedAt] = row as [string, string | null, string | null, string | number, string | number];
    return { workspaceId: scope.workspaceId, text, updatedById, scannedWith, createdAt: new Date(createdAt), updatedAt: new Date(updatedAt) };
  }

  /** The person of this workspace who last set the persona (null: none recorded, or erased since). */
  async updatedBy(scope: WorkspaceScope, persona: Pick<Persona, "updatedById">): Promise<Person | null> {
    if (!persona.updatedById) return null;
    return this.db.person.findFirst({ where: { id: persona.updatedById, workspaceId: scope.workspaceId } });
  }

  /** Sets the text (empty: clears it). Throws PersonaError with a reason a person can act on. */
  async set(scope: WorkspaceScope, raw: string, prov: Provenance): Promise<PersonaChange> {
    const { workspaceId } = scope;
    const text = raw.replace(/\r\n?/g, "\n").trim();
    if (!text) return this.clear(scope, prov);
    if (text.length > this.limit) throw new PersonaError(`the persona is ${text.length} characters; its budget is ${this.limit} (CAIRN_PERSONA_CHARS). Shorten it and try again.`);
    const verdict = scanForWrite(text);
    if (!verdict.ok) throw new PersonaError(verdict.message);
    const changed = await this.db.$transaction(async (tx) => {
      const old = await tx.persona.findUnique({ where: { workspaceId } });
      if (old?.text === verdict.text) return null;
      const row = await tx.persona.upsert({
        where: { workspaceId },
        create: { workspaceId, text: verdict.text, updatedById: prov.actorId, scannedWith: RULES_VERSION },
        update: { text: verdict.text, updatedById: prov.actorId, scannedWith: RULES_VERSION },
      });
      await writeRevision(tx, { workspaceId, entityType: "persona", entityId: workspaceId, action: old ? "edit" : "add", oldText: old?.text ?? null, newText: verdict.text }, prov);
      return row;
    });
    if (!changed) return { kind: "unchanged" };
    return { kind: "set", persona: changed, redacted: verdict.redactions.map((r) => r.kind) };
  }

  async clear(scope: WorkspaceScope, prov: Provenance): Promise<PersonaChange> {
    const { workspaceId } = scope;
    const cleared = await this.db.$transaction(async (tx) => {
      const old = await tx.persona.findUnique({ where: { workspaceId } });
      if (!old) return false;
      await tx.persona.delete({ where: { workspaceId } });
      await writeRevision(tx, { workspaceId, entityType: "persona", entityId: workspaceId, action: "remove", oldText: old.text, newText: null }, prov);
      return true;
    });
    return cleared ? { kind: "cleared" } : { kind: "unchanged" };
  }
}
