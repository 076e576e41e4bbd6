/**
 * Who may share with the whole workspace alone (issue 26: the blast radius of a write is the
 * audience that already saw the words). Team memory is in every prompt of the workspace, so one
 * person's "remember this for the team" reaches only the place it was said until a teammate
 * approves it; an admin's or a trusted teacher's reaches the workspace at once. `open` mode keeps
 * the old behaviour (every team write at once) for teams that want it.
 */
import type { PersonScope, Platform } from "../ground/types.ts";
import { isAdmin, qualified, type AccessPolicy } from "./access.ts";
import type { TeacherStore } from "./teacher-store.ts";

export interface TeamWriteSettings {
  /** approval: team writes wait for a teammate unless trusted; open: every team write at once. */
  mode: "approval" | "open";
  /** Platform-prefixed user ids trusted in every workspace (CAIRN_TEACHERS). */
  teachers: readonly string[];
}

export const DEFAULT_TEAM_WRITES: TeamWriteSettings = { mode: "approval", teachers: [] };

/** What the trust check needs of the history store: the person's platform id and workspace's platform. */
export interface TrustLookup {
  workspace(scope: PersonScope): Promise<{ platform: string } | null>;
  personIn(scope: PersonScope): Promise<{ externalId: string } | null>;
}

export class TeamTrust {
  private readonly envTeachers: ReadonlySet<string>;

  constructor(
    private readonly settings: TeamWriteSettings,
    private readonly access: AccessPolicy,
    private readonly teachers: TeacherStore,
    private readonly lookup: TrustLookup,
  ) {
    this.envTeachers = new Set(settings.teachers);
  }

  get mode(): TeamWriteSettings["mode"] {
    return this.settings.mode;
  }

  /** A platform user is an admin or a trusted teacher (by CAIRN_TEACHERS or `/cairn teachers add`). */
  async trustedUser(scope: PersonScope, platform: Platform, userId: string): Promise<boolean> {
    if (isAdmin(this.access, platform, userId) || this.envTeachers.has(qualified(platform, userId))) return true;
    return this.teachers.has(scope, userId);
  }

  /** How far this person's team writes reach alone: the workspace, or the place they were said. */
  async reach(scope: PersonScope): Promise<"workspace" | "here"> {
    if (this.settings.mode === "open") return "workspace";
    const [ws, person] = await Promise.all([this.lookup.workspace(scope), this.lookup.personIn(scope)]);
    if (!ws || !person) return "here";
    return (await this.trustedUser(scope, ws.platform as Platform, person.externalId)) ? "workspace" : "here";
  }
}
