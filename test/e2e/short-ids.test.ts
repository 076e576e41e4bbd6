/**
 * Short ids (commands/short-id.ts, ids/short-id-store.ts): the first characters of an id the asker
 * can see stand for it in every command that takes an id; a prefix shared by several of theirs is
 * answered with the candidates and changes nothing; a prefix of an id they cannot see is "not
 * found", never "ambiguous". A real core on SQLite and PostgreSQL, commands answered through the
 * fake adapter; rows with chosen ids are inserted so the prefixes are the test's own.
 */
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import type { CommandName } from "../../src/ground/commands.ts";
import type { ReplyTarget } from "../../src/ground/adapter.ts";

const ACCESS = accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] });
/** A cuid-shaped id starting with `head` (8 characters): the rest random, so runs never collide. */
const idWith = (head: string): string => (head + randomBytes(16).toString("hex").replace(/[^a-z0-9]/g, "")).slice(0, 25);
const add = (target: string, content: string) => ({ name: "memory", input: { operations: [{ action: "add", target, content }] } });
const replace = (target: string, oldText: string, content: string) => ({ name: "memory", input: { operations: [{ action: "replace", target, old_text: oldText, content }] } });

forEachDatabase("short ids", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, access: ACCESS } });
  const db = () => getDb().prisma;
  const adapter = new FakeAdapter();
  let attached = false;
  const dm = (user: string, name: string): PlaceOptions => ({ workspace: h.ws, user, name, channel: `D-${user}`, isDm: true });
  const chan = (user: string, name: string): PlaceOptions => ({ workspace: h.ws, user, name, channel: "CGEN", isDm: false, thread: "t1" });

  /** The command answered through the fake adapter, in the place it was asked: its text as posted. */
  async function ask(who: PlaceOptions, name: CommandName, args: string[]): Promise<string> {
    if (!attached) h.core.attach(adapter);
    attached = true;
    const before = adapter.sent.length;
    await h.core.answer(inboundFor(who, `/cairn ${name} ${args.join(" ")}`), { name, args }, { place: adapter.target(who.channel) }, adapter);
    return adapter.sent.slice(before).map((s) => s.text).join("\n");
  }
  async function entry(who: PlaceOptions, data: { id: string; scope: string; text: string; kind?: string; mine?: boolean; channelKey?: string; proposedScope?: string }) {
    const { place: p } = await place(getDb(), who);
    const { mine = data.scope === "user", ...rest } = data;
    return db().memoryEntry.create({ data: { workspaceId: p.workspace.id, status: "active", source: "tool", createdById: p.person.id, ...(mine ? { ownerId: p.person.id } : {}), ...rest } });
  }
  const exists = async (id: string) => (await db().memoryEntry.findUnique({ where: { id } })) !== null;

  it("forget, verify and approve take an 8-character prefix of an id the asker sees", async () => {
    const carol = dm("UCAROL", "Carol");
    const own = await entry(carol, { id: idWith("cfrgt001"), scope: "user", text: "Carol's cat is called Miso" });
    expect(await ask(carol, "forget", [own.id.slice(0, 8)])).toBe("Deleted. It is gone from cairn's memory and history of changes.");
    expect(await exists(own.id)).toBe(false);

    const team = await entry(chan("UCAROL", "Carol"), { id: idWith("cvrfy001"), scope: "team", text: "Deploys happen on Tuesdays" });
    expect(await ask(chan("UCAROL", "Carol"), "verify", [team.id.slice(0, 8)])).toMatch(/^Confirmed as still true/);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: team.id } })).verifiedAt).not.toBeNull();

    // Dan asked for the team in the channel; Carol, a teammate, approves it by its short id.
    const asked = await entry(chan("UDAN", "Dan"), { id: idWith("cappr001"), scope: "channel", channelKey: "CGEN", text: "The wiki lives at wiki.example", proposedScope: "team" });
    expect(await ask(chan("UCAROL", "Carol"), "approve", [asked.id.slice(0, 8)])).toMatch(/^Shared with the whole workspace/);
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: asked.id } })).toMatchObject({ scope: "team", proposedScope: null });
  });

  it("rollback takes a revision's prefix, and why a post's", async () => {
    const carol = dm("UCAROL", "Carol");
    h.fake.enqueue({ toolUse: [add("user", "Carol drinks tea at 4pm")] }, { text: "ok" }, { toolUse: [replace("user", "tea at 4pm", "Carol drinks coffee at 4pm")] }, { text: "ok" });
    await h.core.handle(inboundFor(carol, "I drink tea at 4"));
    await h.core.handle(inboundFor(carol, "actually coffee"));
    const e = await db().memoryEntry.findFirstOrThrow({ where: { text: "Carol drinks coffee at 4pm", status: "active" } });
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: e.id, action: "replace" } });
    const chosen = idWith("crlbk001");
    await db().revision.update({ where: { id: rev.id }, data: { id: chosen } });
    expect(await ask(carol, "rollback", ["crlbk001"])).toMatch(new RegExp(`^Rolled back revision ${chosen.slice(0, 8)}\\w* \\(replace\\)`));
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: e.id } })).text).toBe("Carol drinks tea at 4pm");

    // An answer in the channel, posted under a platform id of our choosing; `why` by its first 8 characters.
    const alice = chan("UALICE", "Alice");
    const postId = `17${Date.now()}.000100`;
    const target: ReplyTarget = { channelId: "CGEN", send: async () => postId };
    h.fake.enqueue({ text: "Deploys are on Tuesdays." });
    await h.core.receive(inboundFor(alice, "when do we deploy?"), target);
    const why = await ask(chan("UBOB", "Bob"), "why", [postId.slice(0, 8)]);
    expect(why).toMatch(/^\*\*Why this answer\*\*/);
  });

  it("an ambiguous prefix lists the candidates the asker sees and changes nothing", async () => {
    const carol = chan("UCAROL", "Carol");
    const a = await entry(carol, { id: idWith("cambg001a"), scope: "team", text: "The office opens at 9" });
    const b = await entry(carol, { id: idWith("cambg001b"), scope: "team", text: "Lunch is at noon" });
    const answer = await ask(carol, "verify", ["cambg001"]);
    expect(answer).toContain("`cambg001` is the start of more than one id you can see. Nothing was changed");
    expect(answer).toContain("`cambg001a` team fact: The office opens at 9");
    expect(answer).toContain("`cambg001b` team fact: Lunch is at noon");
    const rows = await db().memoryEntry.findMany({ where: { id: { in: [a.id, b.id] } } });
    expect(rows.map((r) => r.verifiedAt)).toEqual([null, null]);
    // A longer prefix settles it.
    expect(await ask(carol, "verify", ["cambg001b"])).toMatch(/^Confirmed as still true[\s\S]*Lunch is at noon/);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: a.id } })).verifiedAt).toBeNull();
  });

  it("a prefix of another person's private entry is not found, never ambiguous, and changes nothing", async () => {
    const carol = dm("UCAROL", "Carol");
    const dan = dm("UDAN", "Dan");
    const hidden = await entry(dan, { id: idWith("chidn001"), scope: "user", text: "Dan is interviewing elsewhere" });
    const forget = await ask(carol, "forget", ["chidn001"]);
    expect(forget).toBe("None of your entries has the id chidn001. `me` and `lessons` list them.");
    expect(await ask(carol, "history", ["chidn001"])).not.toContain("interviewing");
    expect(await exists(hidden.id)).toBe(true);

    // Carol's own and Dan's share a prefix: only hers is seen, so the prefix is hers alone.
    const mine = await entry(carol, { id: idWith("cshrd001a"), scope: "user", text: "Carol likes tea" });
    const his = await entry(dan, { id: idWith("cshrd001b"), scope: "user", text: "Dan's salary is private" });
    const answer = await ask(carol, "forget", ["cshrd001"]);
    expect(answer).toBe("Deleted. It is gone from cairn's memory and history of changes.");
    expect(answer).not.toContain("salary");
    expect(await exists(mine.id)).toBe(false);
    expect(await exists(his.id)).toBe(true);
  });

  it("ids shown in answers are short, and a shown short id works when typed back", async () => {
    const carol = dm("UCAROL", "Carol");
    const e = await entry(carol, { id: idWith("cshow001"), scope: "user", text: "Carol prefers bullet points" });
    const me = await ask(carol, "me", []);
    expect(me).not.toContain(e.id);
    const shown = /id (c\w+),/.exec(me.split("\n").find((l) => l.includes("bullet points"))!)![1]!;
    expect(shown.length).toBeLessThan(e.id.length);
    expect(await ask(carol, "history", [shown])).toContain("Carol prefers bullet points");
  });
});
