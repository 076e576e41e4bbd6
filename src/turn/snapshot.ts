/**
 * The system prompt's snapshot of what cairn knows for a session: taken at the session's first
 * turn (and a new speaker's first turn in it), then frozen so the prompt cache holds; retaken only
 * when the session is compressed. Writes reach the database at once and the prompt at the next
 * session or compression.
 *
 * The shared part is shown to everyone who speaks in the session, so its skills index holds only
 * what everyone here may see (bundled, team and this channel's skills); a speaker's private skills
 * and profile go in their own part.
 *
 * Each shared item names who taught it and when (agent/prompt.ts): the names are read here, with
 * the workspace's scope, and frozen in the snapshot's text like the rest, so a rename reaches the
 * prompt at the next session and the cache holds.
 */
import type { Scope } from "../ground/types.ts";
import type { HistoryStore, Place } from "../history/store/store.ts";
import { carryOverNote } from "./carry-over.ts";
import { usedChars, type MemoryEntry, type MemoryStore } from "../memory/store.ts";
import type { SkillStore } from "../skills/store.ts";
import { isPrivateSkill } from "../skills/visibility.ts";
import type { Persona, PersonaStore } from "../persona/store.ts";
import type { SessionManager, Snapshot } from "../agent/sessions.ts";
import { renderProfile, renderShared } from "../agent/prompt.ts";

export interface SnapshotDeps {
  memory: MemoryStore;
  skills: SkillStore;
  persona: PersonaStore;
  sessions: SessionManager;
  /** Team rules in front of several corrected answers lately (learning's traces): marked doubtful. */
  doubtfulRules(scope: Scope): Promise<ReadonlySet<string>>;
  /** The previous session's messages, for the note a new session starts with (carry-over.ts). */
  history: Pick<HistoryStore, "sessionMessages" | "names">;
  now: () => Date;
  /** CAIRN_VERIFY_DAYS: shared items nobody confirmed this long show when they last were (issue 27). */
  verifyDays?: number;
}

/** How a speaker is named to the model and to others. */
export function speakerName(place: Place): string {
  return place.person.displayName ?? place.person.externalId;
}

function placeLabel(place: Place): string {
  const c = place.conversation;
  const platform = place.workspace.platform;
  if (c.isDm) return `direct messages with ${speakerName(place)} (${platform})`;
  return `channel ${c.channelId}${c.threadId ? `, thread ${c.threadId}` : ""} (${platform}; several people may take part)`;
}

/**
 * The reads a session's first snapshot is taken from. The intake starts them for a new session
 * while its first message is stored (`Snapshots.reads`), where they were a round trip after it.
 */
export interface SnapshotReads {
  facts: Promise<MemoryEntry[]>;
  persona: Promise<Persona | null>;
  /** The note of the conversation's session before this one (carry-over.ts). */
  carried: Promise<string | null>;
}

/** A read started before anyone awaits it: its failure reaches whoever awaits it, not the process. */
function held<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

export class Snapshots {
  constructor(private readonly deps: SnapshotDeps) {}

  /**
   * Starts the reads of session `sessionId`'s first snapshot. Only when nothing of the conversation
   * is under way (turn/intake.ts): a turn that is could still write what they read.
   */
  reads(scope: Scope, sessionId: string, facts?: Promise<MemoryEntry[]>): SnapshotReads {
    const { persona, sessions, history, memory } = this.deps;
    const carried = carryOverNote(
      {
        previous: (sc, id) => sessions.previous(sc, id),
        messages: (sc, id, after, through) => history.sessionMessages(sc, id, after, through),
        taught: (sc, ids) => memory.taughtBy(sc, ids),
      },
      scope,
      sessionId,
    );
    return { facts: held(facts ?? memory.facts(scope)), persona: held(persona.get(scope)), carried: held(carried) };
  }

  /**
   * The session's frozen snapshot, taking it now if this is the session's (or this speaker's) first
   * turn. `saved`: its write, when it was taken. The caller need not wait for it before calling the
   * model (a round trip in front of every new session's first call), only before the turn ends: the
   * next turn reads it.
   */
  async ensure(sessionId: string, current: Snapshot | null, scope: Scope, place: Place, early: SnapshotReads | null = null): Promise<{ snapshot: Snapshot; saved: Promise<void> | null }> {
    let snapshot = current;
    let changed = false;
    let read: Promise<MemoryEntry[]> | null = early?.facts ?? null;
    // One read of the place's facts serves both parts.
    const facts = () => (read ??= this.deps.memory.facts(scope));
    if (!snapshot) {
      snapshot = { ...(await this.shared(scope, place, early ?? this.reads(scope, sessionId, facts()))), profiles: {} };
      changed = true;
    }
    if (snapshot.profiles[place.person.id] === undefined) {
      const profile = await this.profile(scope, place, await facts());
      const profileFacts = { ...snapshot.profileFacts, [place.person.id]: profile.facts };
      snapshot = { ...snapshot, profiles: { ...snapshot.profiles, [place.person.id]: profile.text }, profileFacts };
      changed = true;
    }
    return { snapshot, saved: changed ? this.deps.sessions.saveSnapshot(sessionId, snapshot) : null };
  }

  /** A fresh snapshot for this speaker (compression: new memory reaches a running session). */
  async retake(scope: Scope, place: Place): Promise<Snapshot> {
    const facts = this.deps.memory.facts(scope);
    const shared = await this.shared(scope, place, { facts, persona: this.deps.persona.get(scope), carried: Promise.resolve(null) });
    const profile = await this.profile(scope, place, await facts);
    return { ...shared, profiles: { [place.person.id]: profile.text }, profileFacts: { [place.person.id]: profile.facts } };
  }

  /**
   * The shared part, from reads started together (`reads`: the facts, the persona, the previous
   * session's note) and the skills index: on PostgreSQL each is a round trip, and a session's first
   * turn waited for them one after another.
   */
  private async shared(scope: Scope, place: Place, reads: SnapshotReads): Promise<{ shared: string; rules: string[]; facts: string[] }> {
    const { skills, persona, memory, history } = this.deps;
    // The index carries each skill's author and date: the prompt names who taught it.
    const [index, current, carried, facts] = await Promise.all([skills.index(scope), reads.persona, reads.carried, reads.facts]);
    const visible = index.filter((s) => !isPrivateSkill(s));
    const inForce = facts.filter((e) => e.scope === "team" && e.kind === "rule");
    // Judged only where there are rules: a workspace without them reads nothing more per session.
    const doubtful = inForce.length ? await this.deps.doubtfulRules(scope) : new Set<string>();
    const rules = inForce.map((e) => ({ ...e, doubtful: doubtful.has(e.id) }));
    const blocks = memory.blocksOf(scope, facts);
    const taught = [...blocks.filter((b) => b.target !== "user").flatMap((b) => b.entries), ...rules, ...visible];
    const teachers = await history.names(scope, taught.flatMap((t) => (t.createdById ? [t.createdById] : [])));
    const shared = renderShared({
      now: this.deps.now(),
      place: placeLabel(place),
      blocks,
      rules,
      skills: visible,
      persona: current && { text: current.text, limit: persona.limit },
      carried,
      teachers,
      ...(this.deps.verifyDays ? { verifyDays: this.deps.verifyDays } : {}),
    });
    // The profile block is the speaker's own (`profile`): only team and channel facts are everyone's.
    const shown = blocks.filter((b) => b.target !== "user").flatMap((b) => b.entries.map((e) => e.id));
    return { shared, rules: rules.map((r) => r.id), facts: shown };
  }

  /** The speaker's profile block, and the ids of the facts in it. */
  private async profile(scope: Scope, place: Place, facts: readonly MemoryEntry[]): Promise<{ text: string; facts: string[] }> {
    const entries = facts.filter((e) => e.scope === "user");
    const used = usedChars(entries.map((e) => e.text));
    const skills = (await this.deps.skills.index(scope)).filter(isPrivateSkill);
    return { text: renderProfile(speakerName(place), { target: "user", entries, used, limit: this.deps.memory.limit("user") }, skills), facts: entries.map((e) => e.id) };
  }
}
