/**
 * The blast radius of a team write (issue 26), through each platform's own protocol (the drivers of
 * contract.ts): what one person asks cairn to remember "for the team" reaches, alone, only the
 * audience that already saw the words. In approval mode (the default) it is in the channel's next
 * prompt and nowhere else until a teammate's ✅ on cairn's reply shares it; the teacher's own ✅
 * does nothing; an admin's and a trusted teacher's write is the workspace's at once. In open mode
 * (CAIRN_TEAM_WRITES=open) every team write is the workspace's at once, as before.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { accessPolicy, qualified } from "../../src/admission/access.ts";
import type { Core } from "../../src/app/core.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { makeCore, toolResults } from "../support/agent.ts";
import type { Database } from "../support/db.ts";
import { answerIn, Observer, type Driver, type Person, type Place, type Sent } from "./contract.ts";

const ASK = /remember for the team: ([^\n"\\]+?)(?:\\n|\n|"|$)/;
const MAKE_SKILL = /make a team skill: ([a-z-]+)/;
const SKILL_MD = (name: string) => `---\nname: ${name}\ndescription: Use when writing ${name.replaceAll("-", " ")}\n---\n1. Write them down.\n2. Post them in the thread.\n`;

/** The text of a request's last message (blocks joined). */
function lastText(req: RecordedRequest): string {
  const last = req.body.messages.at(-1);
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => ("text" in b && typeof b.text === "string" ? b.text : "")).join("\n");
}

const promptOf = (req: RecordedRequest) => `${systemText(req)}\n${JSON.stringify(req.body.messages)}`;

export function teamReachContract(driver: Driver, getDb: () => Database, mode: "approval" | "open"): void {
  const full = driver.features.reactions && driver.features.channels ? it : it.skip;
  let anthropic: FakeAnthropic;
  let core: Core;
  let observer: Observer;
  const db = () => getDb().prisma;
  // Mallory is the admin here: every driver knows her, and an admin needs no allow-list.
  const policy = accessPolicy({ admins: [qualified(driver.platform, driver.userId("mallory"))], users: [qualified(driver.platform, driver.userId("alice")), qualified(driver.platform, driver.userId("bob"))], channels: [], roles: [] });

  /** A "remember for the team" becomes the memory tool's team add; its result is what the reply says. */
  const respond = (req: RecordedRequest): Step => {
    const results = toolResults(req);
    if (results.length) {
      const said = results[0]!.content;
      return { text: said.includes("A ✅ from a teammate") ? "Saved for this channel. A ✅ from a teammate shares it with the whole workspace." : "Saved for the whole team." };
    }
    const skill = MAKE_SKILL.exec(lastText(req))?.[1];
    if (skill) return { toolUse: [{ name: "skill_manage", input: { action: "create", name: skill, content: SKILL_MD(skill) } }] };
    const asked = ASK.exec(lastText(req))?.[1];
    if (asked) return { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: asked.trim() }] } }] };
    return { text: "ok" };
  };

  const replied = async (sent: Sent) => {
    const [result] = await observer.settled(sent.id);
    if (result?.kind !== "replied") throw new Error(`expected a reply to ${sent.id}, got ${JSON.stringify(result)}`);
    return answerIn(driver.timeline(sent.replyPlace), sent.id);
  };
  const cairnSays = (place: Place, fragment: string) => waitUntil(`cairn to say "${fragment}"`, () => driver.timeline(place).find((m) => m.fromCairn && m.text.includes(fragment)), 20_000);
  /** `person` asks in `place` (a mention, or a DM); the prompts the model was sent for it. */
  const ask = async (place: Place | "dm", person: Person, text: string) => {
    const at = anthropic.requests.length;
    const sent = place === "dm" ? await driver.dm(person, text) : await driver.mention(place, person, text);
    firstSent ??= sent;
    const parts = await replied(sent);
    // Memory is read when a session starts: each ask's place starts afresh after it (a Discord channel is one conversation).
    await core.endSession(observer.received.find((r) => r.inbound.messageId === sent.id)!.inbound, "request");
    return { sent, parts, prompts: anthropic.requests.slice(at).map(promptOf).join("\n") };
  };
  /** The entry of this platform's workspace (the drivers of one database share it). */
  const entryOf = async (text: string) => {
    const { workspaceId } = await db().message.findFirstOrThrow({ where: { platformId: firstSent!.id, role: "user" } });
    return waitUntil(`the entry "${text}"`, () => db().memoryEntry.findFirst({ where: { text, workspaceId } }), 20_000);
  };
  let firstSent: Sent | null = null;
  /** A command typed by `person` where `sent` was said. */
  const command = (sent: Sent, person: Person, name: "approve" | "teachers", args: string[]) => {
    const inbound = observer.received.find((r) => r.inbound.messageId === sent.id)!.inbound;
    return core.command({ ...inbound, author: { externalId: driver.userId(person), displayName: person }, messageId: `cmd-${sent.id}-${name}` }, name, args);
  };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    core = makeCore(getDb(), anthropic, {
      access: policy,
      bundledSkillsDir: null,
      teamWrites: { mode },
      learning: { reviewEveryTurns: 0, reviewMinTurns: 0, skillReviewToolCalls: 0, worker: { pollMs: 25, leaseMs: 10_000, concurrency: 2, backoffMs: 100 } },
    });
    observer = new Observer(core);
    await driver.start(observer, observer);
    await core.startBackground();
  });
  afterAll(async () => {
    await core.stopBackground(1_000);
    await driver.stop();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault((req) => respond(req));
  });

  if (mode === "approval") {
    full("a person's team write is #a's at once and nobody else's; the teacher's own ✅ does nothing, a teammate's shares it with #b", async () => {
      const a = await driver.channel();
      const b = await driver.channel();
      const taught = await ask(a, "alice", "remember for the team: the deploy freeze starts Fridays at noon");
      // The model was told plainly where it went, and so was the person.
      const result = anthropic.requests.flatMap((r) => toolResults(r)).find((t) => t.content.includes("deploy freeze"))!;
      expect(result.content).toContain("SAVED FOR THIS CHANNEL ONLY");
      expect(result.content).toContain("A ✅ from a teammate on your reply");
      expect(taught.parts.map((p) => p.text).join("\n")).toContain("Saved for this channel. A ✅ from a teammate shares it with the whole workspace.");
      const entry = await entryOf("the deploy freeze starts Fridays at noon");
      expect(entry).toMatchObject({ scope: "channel", channelKey: a.channel, proposedScope: "team", status: "active" });

      // #a's next prompt has it; #b's, and Bob's DM, do not.
      expect((await ask(a, "bob", "when is the deploy freeze?")).prompts).toContain("deploy freeze starts Fridays");
      expect((await ask(b, "bob", "when is the deploy freeze?")).prompts).not.toContain("deploy freeze starts Fridays");
      expect((await ask("dm", "bob", "when is the deploy freeze?")).prompts).not.toContain("deploy freeze starts Fridays");

      // Alice's own ✅ on the reply reaches the core and shares nothing.
      const reply = taught.parts.at(-1)!.id!;
      await driver.react(taught.sent.replyPlace, reply, "alice", "check");
      expect(await observer.feedbackOn(reply)).toMatchObject({ kind: "recorded" });
      await core.learning.drain();
      expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).toMatchObject({ scope: "channel", proposedScope: "team" });
      expect((await ask(b, "bob", "deploy freeze, again?")).prompts).not.toContain("deploy freeze starts Fridays");

      // Bob's ✅ shares it: said in the thread, with a revision naming him, and in #b's next prompt.
      await driver.react(taught.sent.replyPlace, reply, "bob", "check");
      await waitUntil("the entry shared", () => db().memoryEntry.findFirst({ where: { id: entry.id, scope: "team" } }), 20_000);
      await cairnSays(taught.sent.replyPlace, "Shared with the whole workspace by");
      const bob = await db().person.findFirstOrThrow({ where: { workspaceId: entry.workspaceId, externalId: driver.userId("bob") } });
      expect(await db().revision.findFirstOrThrow({ where: { entityId: entry.id, action: "share" } })).toMatchObject({ actorId: bob.id, source: "reaction" });
      expect((await ask(b, "bob", "deploy freeze, now?")).prompts).toContain("deploy freeze starts Fridays");
    });

    full("a person's team skill is #a's until a teammate's ✅ on cairn's reply makes it the team's; the creator's own ✅ does nothing", async () => {
      const a = await driver.channel();
      const b = await driver.channel();
      const taught = await ask(a, "alice", "make a team skill: standup-summaries");
      expect(taught.parts.map((p) => p.text).join("\n")).toContain("Saved for this channel. A ✅ from a teammate shares it with the whole workspace.");
      const { workspaceId } = await db().message.findFirstOrThrow({ where: { platformId: taught.sent.id, role: "user" } });
      const skill = await db().skill.findFirstOrThrow({ where: { workspaceId, name: "standup-summaries" } });
      expect(skill).toMatchObject({ scope: "channel", channelKey: a.channel, status: "active" });
      expect((await ask(a, "bob", "anything new?")).prompts).toContain("standup-summaries");
      expect((await ask(b, "bob", "anything new?")).prompts).not.toContain("standup-summaries");

      const reply = taught.parts.at(-1)!.id!;
      await driver.react(taught.sent.replyPlace, reply, "alice", "check");
      expect(await observer.feedbackOn(reply)).toMatchObject({ kind: "recorded" });
      await core.learning.drain();
      expect(await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).toMatchObject({ scope: "channel" });

      await driver.react(taught.sent.replyPlace, reply, "bob", "check");
      await waitUntil("the skill shared", () => db().skill.findFirst({ where: { id: skill.id, scope: "team" } }), 20_000);
      await cairnSays(taught.sent.replyPlace, "is for the whole workspace now");
      expect((await ask(b, "bob", "anything newer?")).prompts).toContain("standup-summaries");
    });

    full("an admin's write and a trusted teacher's are the workspace's at once; a teacher removed is back to their channel", async () => {
      const a = await driver.channel();
      const b = await driver.channel();
      const admin = await ask(a, "mallory", "remember for the team: the on-call phone is in the blue drawer");
      expect(admin.parts.map((p) => p.text).join("\n")).toContain("Saved for the whole team.");
      expect(await entryOf("the on-call phone is in the blue drawer")).toMatchObject({ scope: "team", proposedScope: null });
      expect((await ask(b, "alice", "where is the on-call phone?")).prompts).toContain("blue drawer");

      // Only admins name teachers.
      expect((await command(admin.sent, "alice", "teachers", ["add", driver.userId("alice")])).text).toMatch(/Only cairn admins/);
      expect((await command(admin.sent, "mallory", "teachers", ["add", `<@${driver.userId("bob")}>`])).text).toContain("is a trusted teacher");
      expect((await command(admin.sent, "mallory", "teachers", ["list"])).text).toContain(driver.userId("bob"));
      await ask(a, "bob", "remember for the team: release notes go in #announcements");
      expect(await entryOf("release notes go in #announcements")).toMatchObject({ scope: "team", proposedScope: null });
      expect((await ask(b, "alice", "where do release notes go?")).prompts).toContain("release notes go in #announcements");

      expect((await command(admin.sent, "mallory", "teachers", ["remove", driver.userId("bob")])).text).toContain("no longer a trusted teacher");
      await ask(a, "bob", "remember for the team: the staging database resets on Mondays");
      expect(await entryOf("the staging database resets on Mondays")).toMatchObject({ scope: "channel", channelKey: a.channel, proposedScope: "team" });
      expect((await ask(b, "alice", "when does staging reset?")).prompts).not.toContain("staging database resets on Mondays");
      // A teammate's `/cairn approve` shares it as the ✅ does; an admin's would too.
      const id = (await entryOf("the staging database resets on Mondays")).id;
      expect((await command(admin.sent, "alice", "approve", [id])).text).toContain("Shared with the whole workspace");
      expect((await ask(b, "alice", "when does staging reset, now?")).prompts).toContain("staging database resets on Mondays");
    });
  } else {
    full("CAIRN_TEAM_WRITES=open: anyone's team write is the workspace's at once, as before", async () => {
      const a = await driver.channel();
      const b = await driver.channel();
      const taught = await ask(a, "alice", "remember for the team: lunch is at 12:30 on Thursdays");
      expect(taught.parts.map((p) => p.text).join("\n")).toContain("Saved for the whole team.");
      expect(await entryOf("lunch is at 12:30 on Thursdays")).toMatchObject({ scope: "team", proposedScope: null, status: "active" });
      expect((await ask(b, "bob", "when is lunch on Thursdays?")).prompts).toContain("lunch is at 12:30 on Thursdays");
    });
  }
}
