/**
 * Forgetting sticks on Slack's channel knowledge, end to end (the real Bolt and WebClient against
 * the fake Slack, a real core on SQLite and PostgreSQL): after `forget me` or `listen exclude-me`
 * (even undone by `include-me`), a backfill through conversations.history reads back nothing its
 * author said before asking; a channel whose listening was turned off is, turned on again, read
 * from then on only.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { captureLogger, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { startBothModes, type BothModes } from "../support/slack-modes.ts";

const ADMIN = "UADMIN";
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] });
const DAY = 24 * 60 * 60_000;
const channelId = (): string => uniqueId("C").replace("-", "").toUpperCase();

let tsSeq = 0;
const tsAgo = (ago: number): string => `${Math.floor((Date.now() - ago) / 1000)}.${String(++tsSeq % 1_000_000).padStart(6, "0")}`;

forEachDatabase("slack: forgetting sticks through backfills", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let modes: BothModes;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    for (const [id, displayName] of Object.entries({ [ADMIN]: "Ada", UANA: "Ana", UBEN: "Ben" })) slack.addUser({ id, displayName });
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, access: ACCESS });
    modes = await startBothModes(core, slack, logs.log);
  });
  afterAll(async () => {
    await modes?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault({ text: "ok" });
    slack.reset();
    team = uniqueId("T");
  });

  async function command(user: string, channel: string, text: string): Promise<string> {
    const responseUrl = slack.responseUrl();
    const payload = { command: "/cairn", text, team_id: team, channel_id: channel, user_id: user, response_url: responseUrl, trigger_id: uniqueId("trig") };
    expect((await postSigned(modes.eventsUrl, payload, { contentType: "application/x-www-form-urlencoded" })).status).toBe(200);
    const answer = await slack.waitFor(`the answer to /cairn ${text}`, () => slack.responses.find((r) => responseUrl.endsWith(r.id)), 15_000);
    return String(answer.body.text);
  }

  /** A live post: in Slack's store and sent as its event; resolves once the core observed it. */
  async function say(user: string, channel: string, text: string): Promise<string> {
    const ts = slack.seedMessage({ channel, user, text });
    const seen = () => logs.find("channel event observed", (l) => l.id === ts && l.team === team).length;
    expect((await postSigned(modes.eventsUrl, eventCallback(team, { type: "message", channel, channel_type: "channel", user, text, ts, event_ts: ts }))).status).toBe(200);
    await waitUntil(`message ${ts} observed`, () => seen() > 0, 15_000);
    return ts;
  }

  /** A channel whose history holds Ana's and Ben's older messages. */
  function seed(channel: string): void {
    for (const user of [ADMIN, "UANA", "UBEN", slack.bot.userId]) slack.joinChannel(user, channel);
    slack.seedHistory(channel, [
      { ts: tsAgo(10 * DAY), user: "UBEN", text: "Ben's home address is 12 Elm Street" },
      { ts: tsAgo(9 * DAY), user: "UANA", text: "the release train leaves on Thursdays" },
      { ts: tsAgo(8 * DAY), user: "UBEN", text: "Ben: I will be out for surgery next week" },
    ]);
  }

  const kept = async (channel: string) =>
    (await getDb().prisma.message.findMany({ where: { role: "channel", conversation: { key: `slack:${team}:listen:${channel}` } }, include: { author: true }, orderBy: { createdAt: "asc" } })).map((m) => `${m.author?.externalId}: ${m.text}`);

  async function listenOn(channel: string): Promise<string> {
    const answer = await command(ADMIN, channel, "listen on");
    await core.learning.drain();
    return answer;
  }

  it("after forget me, a backfill of the channel they spoke in reads back nothing they said before; what they say after is kept", async () => {
    const channel = channelId();
    seed(channel);
    await command("UBEN", channel, "forget me");
    expect(await command("UBEN", channel, "forget me confirm")).toMatch(/^Done\. Erased/);

    await listenOn(channel);
    expect(await kept(channel)).toEqual(["UANA: the release train leaves on Thursdays"]);
    // The backfill read Ben's messages from Slack, and left them out.
    expect(slack.callsTo("conversations.history").filter((c) => c.args.channel === channel && c.ok).length).toBeGreaterThan(0);

    await say("UBEN", channel, "back from leave, hello all");
    expect(await kept(channel)).toEqual(["UANA: the release train leaves on Thursdays", "UBEN: back from leave, hello all"]);
  });

  it("after exclude-me, even undone by include-me, a backfill skips what they said before excluding themselves", async () => {
    const first = channelId();
    seed(first);
    await listenOn(first);
    expect(await kept(first)).toHaveLength(3);
    expect(await command("UBEN", first, "listen exclude-me")).toMatch(/removed 2 of your messages/);
    expect(await command("UBEN", first, "listen include-me")).toMatch(/kept again from now on/);

    const second = channelId();
    seed(second);
    await listenOn(second);
    expect(await kept(second)).toEqual(["UANA: the release train leaves on Thursdays"]);
    await say("UBEN", second, "new week, new plans");
    expect(await kept(second)).toEqual(["UANA: the release train leaves on Thursdays", "UBEN: new week, new plans"]);
  });

  it("listen on again after an off reads new messages only: nothing said before the off, or while it was off, comes back", async () => {
    const channel = channelId();
    seed(channel);
    await listenOn(channel);
    expect(await command(ADMIN, channel, "listen off")).toMatch(/Turned on again, I keep only messages posted from then on/);
    // What was kept is deleted on Slack meanwhile, and something is said while cairn does not listen.
    await getDb().prisma.message.deleteMany({ where: { role: "channel", conversation: { key: `slack:${team}:listen:${channel}` } } });
    slack.seedHistory(channel, [{ ts: tsAgo(60_000), user: "UANA", text: "said while nobody listened" }]);

    const onAgain = Date.now();
    expect(await listenOn(channel)).toMatch(/^Listening in this channel from now on, new messages only/);
    expect(await kept(channel)).toEqual([]);
    const pages = slack.callsTo("conversations.history").filter((c) => c.args.channel === channel && c.ok);
    expect(Number(pages.at(-1)!.args.oldest) * 1000).toBeGreaterThanOrEqual(onAgain - 1_000);
    expect(slack.callsTo("chat.postMessage").filter((c) => c.args.channel === slack.dmChannel(ADMIN)).map((c) => String(c.args.text)).at(-1)).toMatch(/^Done reading <#.*>: 0 messages kept/);

    await say("UANA", channel, "and now we talk again");
    expect(await kept(channel)).toEqual(["UANA: and now we talk again"]);
  });
});
