/**
 * What the "why this answer?" tests seed and check, the same on Slack and Discord: memory at every
 * scope (a team rule and fact, a channel fact and lesson, Alice's and Bob's profile facts, Alice's
 * private lesson, a team skill and Alice's private skill), and what a why answer must list of one
 * reply's stored trace for an asker, and must not.
 */
import { expect } from "vitest";
import type { Core } from "../../src/app/core.ts";
import type { Database } from "../../src/db/client.ts";
import { scopeOf, type Place } from "../../src/history/store/store.ts";
import { showsId } from "./short-ids.ts";

export interface WhySeed {
  rule: { id: string; text: string };
  teamFact: { id: string; text: string };
  channelFact: { id: string; text: string };
  aliceFact: { id: string; text: string };
  bobFact: { id: string; text: string };
  aliceLesson: { id: string; text: string };
  channelLesson: { id: string; text: string };
  teamSkill: string;
  aliceSkill: string;
}

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n1. Run the installer.\n`;

/** `alice` and `bob`: their places in the channel the answers are in. */
export async function seedWhy(core: Core, database: Database, alice: Place, bob: Place, tag: string): Promise<WhySeed> {
  const db = database.prisma;
  const ws = alice.workspace.id;
  const entry = async (data: { scope: string; kind: string; text: string; ownerId?: string; channelKey?: string; createdById: string }) => {
    const row = await db.memoryEntry.create({ data: { workspaceId: ws, status: "active", source: "tool", ...data } });
    return { id: row.id, text: row.text };
  };
  const channelKey = alice.conversation.channelId;
  const seed: WhySeed = {
    rule: await entry({ scope: "team", kind: "rule", text: `ALWAYS pin package versions ${tag}`, createdById: alice.person.id }),
    teamFact: await entry({ scope: "team", kind: "fact", text: `The team ships on Tuesdays ${tag}`, createdById: alice.person.id }),
    channelFact: await entry({ scope: "channel", kind: "fact", channelKey, text: `This channel owns the build tooling ${tag}`, createdById: alice.person.id }),
    aliceFact: await entry({ scope: "user", kind: "fact", ownerId: alice.person.id, text: `Alice is on the payments squad ${tag}`, createdById: alice.person.id }),
    bobFact: await entry({ scope: "user", kind: "fact", ownerId: bob.person.id, text: `Bob is allergic to peanuts ${tag}`, createdById: bob.person.id }),
    aliceLesson: await entry({ scope: "user", kind: "lesson", ownerId: alice.person.id, text: `ALWAYS explain package installs to Alice step by step ${tag}`, createdById: alice.person.id }),
    channelLesson: await entry({ scope: "channel", kind: "lesson", channelKey, text: `ALWAYS install packages with pnpm in this repo ${tag}`, createdById: bob.person.id }),
    teamSkill: `team-install-${letters(tag)}`,
    aliceSkill: `alice-notes-${letters(tag)}`,
  };
  const prov = (p: Place) => ({ source: "tool" as const, actorId: p.person.id, sourceMessageId: null, reason: "seeded by the test" });
  await core.skills.create(scopeOf(alice), skillMd(seed.teamSkill, "Use when installing packages"), "team", prov(alice));
  await core.skills.create(scopeOf(alice), skillMd(seed.aliceSkill, "Use when Alice asks about installs"), "user", prov(alice));
  core.memory.forgetCached();
  return seed;
}

/** The model's steps for the answer that draws on everything: both skills read, one search. */
export function drawingTurn(seed: WhySeed, query: string) {
  return {
    toolUse: [
      { name: "skill_view", input: { name: seed.teamSkill } },
      { name: "skill_view", input: { name: seed.aliceSkill } },
      { name: "session_search", input: { query, limit: 10 } },
    ],
  };
}

export interface StoredTrace {
  rules: string[];
  lessons: string[];
  facts: string[];
  skills: string[];
  searches: { query: string; messageIds: number[] }[];
}

export async function storedTrace(database: Database, replyId: number): Promise<StoredTrace> {
  const row = await database.prisma.replyTrace.findUniqueOrThrow({ where: { messageId: replyId } });
  const parse = <T>(s: string) => JSON.parse(s) as T;
  return { rules: parse(row.rules), lessons: parse(row.lessons), facts: parse(row.facts), skills: parse(row.skills), searches: parse(row.searches) };
}

/** Which of a trace's search results are in a DM (only its owner may see them). */
export async function dmHits(database: Database, trace: StoredTrace): Promise<Set<number>> {
  const ids = trace.searches.flatMap((s) => s.messageIds);
  const rows = await database.prisma.message.findMany({ where: { id: { in: ids } }, include: { conversation: true } });
  return new Set(rows.filter((r) => r.conversation.isDm).map((r) => r.id));
}

/**
 * A why answer about `trace`, for Alice (who asked) or Bob (in the channel): everything of the trace
 * either sees is listed with its id; what only Alice may see (her profile fact, private lesson and
 * skill, her DMs found, the words searched for) is counted for Bob, never shown; Bob's profile,
 * which was never in Alice's prompt, shows to neither.
 */
export function expectWhy(text: string, asker: "alice" | "bob", seed: WhySeed, trace: StoredTrace, dms: ReadonlySet<number>): void {
  const has = (id: string, s: string) => {
    // Ids are shown short: the item's line carries its id's first characters.
    expect(text).toContain(s);
    expect(showsId(text, id, s)).toBe(true);
  };
  expect(trace.rules).toContain(seed.rule.id);
  has(seed.rule.id, seed.rule.text);
  for (const f of [seed.teamFact, seed.channelFact]) {
    expect(trace.facts).toContain(f.id);
    has(f.id, f.text);
  }
  expect(trace.facts).toContain(seed.aliceFact.id);
  expect(trace.facts).not.toContain(seed.bobFact.id);
  expect(text).not.toContain(seed.bobFact.id);
  expect(text).not.toContain("peanuts");
  expect(trace.lessons).toContain(seed.channelLesson.id);
  has(seed.channelLesson.id, seed.channelLesson.text);
  expect(trace.skills.sort()).toEqual([seed.aliceSkill, seed.teamSkill].sort());
  expect(text).toContain(`\`${seed.teamSkill}\``);
  const hits = trace.searches.flatMap((s) => s.messageIds);
  expect(trace.searches).toHaveLength(1);
  expect(hits.length).toBeGreaterThan(dms.size);
  for (const id of hits.filter((h) => !dms.has(h))) expect(text).toContain(`(message ${id})`);
  const aliceLessonShown = trace.lessons.includes(seed.aliceLesson.id) ? 1 : 0;
  if (asker === "alice") {
    has(seed.aliceFact.id, seed.aliceFact.text);
    if (aliceLessonShown) has(seed.aliceLesson.id, seed.aliceLesson.text);
    expect(text).toContain(`\`${seed.aliceSkill}\``);
    expect(text).toContain(`Search for "${trace.searches[0]!.query}"`);
    for (const id of dms) expect(text).toContain(`(message ${id})`);
    expect(text).not.toMatch(/private to someone else/);
    return;
  }
  for (const hidden of [seed.aliceFact.id, seed.aliceFact.text, seed.aliceLesson.id, seed.aliceLesson.text, seed.aliceSkill, 'Search for "']) expect(text).not.toContain(hidden);
  for (const id of dms) expect(text).not.toContain(`(message ${id})`);
  const count = 1 + aliceLessonShown + 1 + dms.size;
  expect(text).toContain(`${count} more items were private to someone else`);
}

/** A random tag's digits as letters: a skill name with a run of digits reads like a date or a ticket, and is refused. */
function letters(tag: string): string {
  return tag.replace(/\d/g, (d) => "abcdefghij"[Number(d)]!);
}
