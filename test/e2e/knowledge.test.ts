/**
 * Channel knowledge on a real Core (src/knowledge): listening turned on by an admin, the backfill
 * (resumable), what a search finds and for whom, edits, deletions, opt-outs, forget me, listen off
 * and retention. The platform is an in-memory one (test/support/channel-platform.ts); the Slack and
 * Discord adapters have their own suites against their fake servers.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore, toolResults } from "../support/agent.ts";
import { channelPlatform, type ChannelPlatform } from "../support/channel-platform.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import type { Core } from "../../src/app/core.ts";
import type { CommandReply } from "../../src/ground/commands.ts";

const ADMIN = "UADMIN";
const DAY = 24 * 60 * 60_000;
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`, `discord:${ADMIN}`], users: [], channels: [], roles: [] });

forEachDatabase("channel knowledge", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, access: ACCESS } });
  const inChannel = (user: string, channel: string): PlaceOptions => ({ workspace: h.ws, user, channel, isDm: false, name: user });
  const dm = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name: user });

  /** A platform with channel CPLAN: a decision, chatter, a bot, and a message older than the backfill reaches. */
  function platform(core: Core = h.core, opts: { canRead?: boolean; pageSize?: number } = {}): ChannelPlatform {
    const p = channelPlatform("slack", h.ws, opts);
    const now = Date.now();
    p.history.set("CPLAN", [
      p.message("CPLAN", "100.1", "UOLD", "ancient kumquat migration plan", new Date(now - 200 * DAY)),
      p.message("CPLAN", "200.1", "UANA", "We decided: the billing cutover happens on March 3rd, after the freeze", new Date(now - 10 * DAY)),
      p.message("CPLAN", "200.2", "UBEN", "ok, I'll tell the support team about the cutover", new Date(now - 10 * DAY + 60_000)),
      p.message("CPLAN", "200.3", "UBOT", "deploy bot: billing cutover build green", new Date(now - 9 * DAY), { author: { externalId: "UBOT", isBot: true } }),
      p.message("CPLAN", "200.4", "UCAT", "lunch anyone?", new Date(now - 2 * DAY)),
    ]);
    p.members.set("CPLAN", new Set([ADMIN, "UANA", "UBEN", "UCAT", "UMEMBER"]));
    if (p.readers) p.readers.set("CPLAN", new Set([ADMIN, "UANA", "UMEMBER"]));
    core.attach(p);
    return p;
  }

  const command = (core: Core, opts: PlaceOptions, ...args: string[]): Promise<CommandReply> => core.command(inboundFor(opts), "listen", args);

  /** `who` asks, in a DM, and the model searches for `query`: the tool's result. */
  async function search(who: string, query: string, core: Core = h.core): Promise<string> {
    h.fake.enqueue({ toolUse: [{ name: "session_search", input: { query } }] }, { text: "answered" });
    await core.handle(inboundFor(dm(who), `what about ${query}?`));
    return toolResults(h.fake.lastRequest()!)[0]!.content;
  }

  async function listenAndBackfill(core: Core = h.core): Promise<void> {
    expect((await command(core, inChannel(ADMIN, "CPLAN"), "on")).outcome).toBe("done");
    await core.learning.drain();
  }

  it("turns listening on for admins only, says so in the channel once, and reads back the history it may keep", async () => {
    const p = platform();
    expect((await command(h.core, inChannel("UANA", "CPLAN"), "on")).outcome).toBe("refused");
    expect((await command(h.core, dm(ADMIN), "on")).text).toMatch(/never listen in DMs/);
    expect((await command(h.core, inChannel(ADMIN, "GGROUP"), "on")).text).toMatch(/never listen in DMs or group DMs/);
    await listenAndBackfill();

    const announcements = p.posts.filter((x) => x.target.kind === "channel");
    expect(announcements).toHaveLength(1);
    expect(announcements[0]!.text).toContain("cairn now keeps this channel's messages");
    expect(announcements[0]!.text).toContain("/cairn listen exclude-me");
    // The admin who asked is told when it is done, in a DM.
    expect(p.posts.filter((x) => x.target.kind === "dm").map((x) => x.text)).toEqual([expect.stringMatching(/^Done reading <#CPLAN>: 3 messages kept/)]);

    const kept = await getDb().prisma.message.findMany({ where: { role: "channel", conversation: { key: { endsWith: ":listen:CPLAN" }, workspace: { externalId: h.ws } } }, orderBy: { createdAt: "asc" } });
    // Within 90 days, people only: the bot and the 200-day-old message are not kept.
    expect(kept.map((m) => m.platformId)).toEqual(["200.1", "200.2", "200.4"]);
    expect(kept[0]!.link).toBe("https://chat.example/CPLAN/200.1");
    expect((await command(h.core, inChannel("UCAT", "CPLAN"), "status")).text).toMatch(/on\*\* .*\n- 3 messages kept; history read back to/);

    // Turning it off and on again does not announce twice, and keeps nothing twice.
    await command(h.core, inChannel(ADMIN, "CPLAN"), "off");
    await listenAndBackfill();
    expect(p.posts.filter((x) => x.target.kind === "channel")).toHaveLength(1);
    expect(await getDb().prisma.message.count({ where: { role: "channel", conversation: { workspace: { externalId: h.ws } } } })).toBe(3);
  });

  it("answers a member with the message, its author, date and link; a non-member finds nothing of the channel", async () => {
    platform();
    await listenAndBackfill();
    const found = await search("UMEMBER", "billing cutover");
    expect(found).toMatch(/We decided: the «billing» «cutover» happens on March 3rd/);
    expect(found).toContain("UANA");
    expect(found).toContain("https://chat.example/CPLAN/200.1");
    expect(found).toMatch(/said in <#CPLAN>/);
    expect(await search("UOUTSIDER", "billing cutover")).toMatch(/^No earlier messages match/);
  });

  it("hides a channel from someone the moment they leave it, and shows it again when they rejoin", async () => {
    platform();
    await listenAndBackfill();
    expect(await search("UMEMBER", "cutover")).toContain("200.1");
    await h.core.observe({ kind: "member", platform: "slack", workspace: { externalId: h.ws }, channel: "CPLAN", user: "UMEMBER", joined: false });
    expect(await search("UMEMBER", "cutover")).toMatch(/^No earlier messages match/);
    await h.core.observe({ kind: "member", platform: "slack", workspace: { externalId: h.ws }, channel: "CPLAN", user: "UMEMBER", joined: true });
    expect(await search("UMEMBER", "cutover")).toContain("200.1");
  });

  it("asks the platform who can read a channel where roles decide (canRead), at each search", async () => {
    const p = platform(h.core, { canRead: true });
    await listenAndBackfill();
    expect(await search("UMEMBER", "cutover")).toContain("200.1");
    // UBEN is a member on the list but cannot view the channel by its permissions.
    expect(await search("UBEN", "cutover")).toMatch(/^No earlier messages match/);
    p.readers!.get("CPLAN")!.delete("UMEMBER");
    expect(await search("UMEMBER", "cutover")).toMatch(/^No earlier messages match/);
  });

  it("keeps new messages live, follows edits and deletions, and keeps nothing new once listening is off", async () => {
    const p = platform();
    await listenAndBackfill();
    const ws = { externalId: h.ws };
    await h.core.observe({ kind: "message", message: p.message("CPLAN", "300.1", "UANA", "the staging database moves to eu-west on Friday", new Date()) });
    expect(await search("UMEMBER", "staging database")).toContain("eu-west");

    await h.core.observe({ kind: "edit", platform: "slack", workspace: ws, channel: "CPLAN", messageId: "300.1", text: "the staging database moves to us-east on Monday" });
    const edited = await search("UMEMBER", "staging database");
    expect(edited).toContain("us-east");
    expect(edited).not.toContain("eu-west");
    expect(await search("UMEMBER", "eu-west")).toMatch(/^No earlier messages match/);

    await h.core.observe({ kind: "delete", platform: "slack", workspace: ws, channel: "CPLAN", messageId: "300.1" });
    expect(await search("UMEMBER", "staging database")).toMatch(/^No earlier messages match/);

    // A channel nobody turned listening on in: nothing is kept.
    await h.core.observe({ kind: "message", message: p.message("COTHER", "400.1", "UANA", "quarterly zebra numbers", new Date()) });
    await command(h.core, inChannel(ADMIN, "CPLAN"), "off");
    await h.core.observe({ kind: "message", message: p.message("CPLAN", "500.1", "UANA", "secret zebra roadmap", new Date()) });
    expect(await search("UMEMBER", "zebra")).toMatch(/^No earlier messages match/);
    // What was kept before stays searchable by members.
    expect(await search("UMEMBER", "billing cutover")).toContain("200.1");
  });

  it("removes a person's messages on exclude-me (and keeps none of theirs after), and on forget me", async () => {
    const p = platform();
    await listenAndBackfill();
    expect((await command(h.core, dm("UANA"), "exclude-me")).text).toMatch(/removed 1 of your messages/);
    expect(await search("UMEMBER", "decided cutover March")).not.toContain("We decided");
    await h.core.observe({ kind: "message", message: p.message("CPLAN", "600.1", "UANA", "another pineapple decision", new Date()) });
    expect(await search("UMEMBER", "pineapple")).toMatch(/^No earlier messages match/);
    await command(h.core, dm("UANA"), "include-me");
    await h.core.observe({ kind: "message", message: p.message("CPLAN", "600.2", "UANA", "pineapple follow-up", new Date()) });
    expect(await search("UMEMBER", "pineapple")).toContain("600.2");

    // forget me: Ben's kept message goes with the rest of what cairn holds of him.
    const ben = dm("UBEN");
    await h.core.command(inboundFor(ben), "forget", ["me"]);
    expect((await h.core.command(inboundFor(ben), "forget", ["me", "confirm"])).text).toMatch(/1 messages kept from channels/);
    expect(await search("UMEMBER", "support team")).toMatch(/^No earlier messages match/);
  });

  it("resumes a backfill cut short from its last page, keeping every message once", async () => {
    const p = platform(h.core, { pageSize: 1 });
    p.failAfterPages = 2;
    expect((await command(h.core, inChannel(ADMIN, "CPLAN"), "on")).outcome).toBe("done");
    await h.core.learning.drain();
    const listen = await getDb().prisma.channelListen.findFirstOrThrow({ where: { channelId: "CPLAN", workspaceId: (await getDb().prisma.workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id } });
    // Two pages read (the newest message, then the bot's, not kept), the third failed.
    expect(p.cursors).toEqual([null, "1", "2"]);
    expect(listen).toMatchObject({ backfill: "running", cursor: "2", backfilled: 1 });
    // The job is retried after its backoff (made due now), on a new process, from the stored cursor.
    await getDb().prisma.job.updateMany({ where: { kind: "listen_backfill" }, data: { runAt: new Date() } });
    const restarted = makeCore(getDb(), h.fake, { bundledSkillsDir: null, access: ACCESS });
    const again = platform(restarted, { pageSize: 1 });
    await restarted.learning.drain();
    expect(again.cursors[0]).toBe("2");
    const done = await getDb().prisma.channelListen.findUniqueOrThrow({ where: { id: listen.id } });
    expect(done).toMatchObject({ backfill: "done", backfilled: 3 });
    expect(await getDb().prisma.message.count({ where: { role: "channel", conversation: { workspace: { externalId: h.ws } } } })).toBe(3);
  });

  it("removes kept messages past the retention", async () => {
    const core = makeCore(getDb(), h.fake, { bundledSkillsDir: null, access: ACCESS, knowledge: { retentionDays: 5 } });
    platform(core);
    await listenAndBackfill(core);
    // Retention is for every workspace: other tests' old messages may go too.
    expect(await core.knowledge.purge()).toBeGreaterThanOrEqual(2);
    expect((await getDb().prisma.message.findMany({ where: { role: "channel", conversation: { workspace: { externalId: h.ws } } } })).map((m) => m.platformId)).toEqual(["200.4"]);
  });
});
