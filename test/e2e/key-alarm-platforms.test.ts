/**
 * A model key refused mid-run (issue 28), end to end on Slack and Discord: the real Bolt and
 * discord.js against the fake Slack Web API (signed Events API requests) and the fake Discord
 * (gateway and REST), one real core serving both, the real Anthropic SDK against the fake model
 * server answering 401. The person is told an admin must fix the key (not "try again"); each admin
 * of that platform (CAIRN_ADMINS) gets one DM, and a second refused turn within the hour sends none.
 * `/cairn learn` says the same of the key.
 *
 * "No second DM" is shown by the alarm's own log line: the alarm writes it, synchronously, exactly
 * when it sends DMs, and before the refused turn's reply is posted; the logger here is synchronous.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { pino, type Logger } from "pino";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { TEST_SETTINGS } from "../support/agent.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { SIGNING_SECRET, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack, type SlackCall } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { Core } from "../../src/app/core.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { learnKeyRefused } from "../../src/commands/learn.ts";
import { MODEL_KEY_REFUSED_ADMIN_NOTICE, MODEL_KEY_REFUSED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";

const ALARM = "the model API refused ANTHROPIC_API_KEY; an admin needs to fix it";
const SLACK_ADMINS = ["UADMINA", "UADMINB"];
const person = (username: string): FakeUser => ({ id: snowflake(), username, globalName: username });
const dana = person("dana");
const erin = person("erin");
const discordAdmin = person("admin");
const GUILD = { id: snowflake(), name: "Acme", channel: snowflake() };

/** A pino logger whose lines are parsed as they are written (no stream buffering). */
function syncLogger(): { log: Logger; count(msg: string): number } {
  const lines: { msg?: string }[] = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string }) });
  return { log, count: (msg) => lines.filter((l) => l.msg === msg).length };
}

forEachDatabase("a model key refused mid-run, on slack and discord", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let core: Core;
  let slackAdapter: SlackHandle;
  let discordAdapter: DiscordAdapter;
  let logs: ReturnType<typeof syncLogger>;
  let team: string;

  const eventsUrl = () => `http://127.0.0.1:${slackAdapter.port}/slack/events`;
  const slackPosts = (channel: string): SlackCall[] => slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
  const slackAdminDms = () => SLACK_ADMINS.map((admin) => slackPosts(slack.dmChannel(admin)).map((c) => String(c.args.text)));
  const discordAdminDms = () => discord.posts.filter((p) => p.channelId === discord.dmChannel(discordAdmin)).map((p) => p.content);

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    discord = await startFakeDiscord({ guilds: [{ id: GUILD.id, name: GUILD.name, channels: [{ id: GUILD.channel, name: "general" }], members: [dana, erin, discordAdmin] }] });
    logs = syncLogger();
    const access = accessPolicy({ admins: [...SLACK_ADMINS.map((a) => `slack:${a}`), `discord:${discordAdmin.id}`], users: [], channels: [], roles: [] });
    const model = createModelClient({ apiKey: anthropic.apiKey, baseURL: anthropic.url, maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
    core = new Core({ database: getDb(), model, settings: { ...TEST_SETTINGS, bundledSkillsDir: null, access }, log: logs.log });
    slackAdapter = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), logs.log);
    discordAdapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, logs.log, { interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await slackAdapter?.stop();
    await discordAdapter?.stop();
    await slack?.close();
    await discord?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    // The key passed start-up, and is revoked now: every model call is refused.
    anthropic.failForever(401);
    team = uniqueId("T");
    for (const id of ["UALICE", "UBOB", ...SLACK_ADMINS]) slack.addUser({ id, displayName: id.slice(1).toLowerCase() });
  });

  it("on Slack: the asker is told an admin must fix the key, each Slack admin gets one DM, and a second refusal within the hour none", async () => {
    const before = logs.count(ALARM);
    const ts = slack.nextTs();
    const dmChannel = `DALICE${team.slice(2)}`;
    await postSigned(eventsUrl(), eventCallback(team, { type: "message", channel: dmChannel, channel_type: "im", user: "UALICE", text: "when is the release?", ts, event_ts: ts }));
    const [reply] = await waitUntil("the answer to Alice", () => slackPosts(dmChannel).length > 0 && slackPosts(dmChannel), 15_000);
    expect(reply!.args.text).toBe(toMrkdwn(MODEL_KEY_REFUSED_REPLY));
    expect(String(reply!.args.text)).not.toContain(toMrkdwn(MODEL_UNAVAILABLE_REPLY));

    // Each admin's DM: opened with conversations.open, then the notice posted there.
    await waitUntil("both admins' DMs", () => slackAdminDms().every((dms) => dms.length === 1), 15_000);
    expect(slackAdminDms()).toEqual(SLACK_ADMINS.map(() => [toMrkdwn(MODEL_KEY_REFUSED_ADMIN_NOTICE)]));
    const opened = slack.callsTo("conversations.open").map((c) => c.args.users);
    for (const admin of SLACK_ADMINS) expect(opened).toContain(admin);
    expect(opened).not.toContain("UALICE");
    expect(logs.count(ALARM)).toBe(before + 1);

    // Bob asks in a channel, minutes later: told the same, and nobody is DMed again.
    const channel = uniqueId("C");
    const text = `<@${slack.bot.userId}> and the changelog?`;
    const mention = slack.seedMessage({ channel, user: "UBOB", text });
    await postSigned(eventsUrl(), eventCallback(team, { type: "app_mention", channel, user: "UBOB", text, ts: mention, event_ts: mention }));
    const [second] = await waitUntil("the answer to Bob", () => slackPosts(channel).length > 0 && slackPosts(channel), 15_000);
    expect(second!.args).toMatchObject({ text: toMrkdwn(MODEL_KEY_REFUSED_REPLY), thread_ts: mention });
    expect(logs.count(ALARM)).toBe(before + 1);
    expect(slackAdminDms().map((dms) => dms.length)).toEqual([1, 1]);
    // One call per question: a refused key is not retried.
    expect(anthropic.requests).toHaveLength(2);
    // Slack's refusal is Slack's admins' business: Discord's admin was not told of it.
    expect(discordAdminDms()).toEqual([]);
  });

  it("on Discord: the asker is told, Discord's admin gets one DM (its DM channel created), and a second refusal within the hour none", async () => {
    const before = logs.count(ALARM);
    const slackDms = slackAdminDms().map((dms) => dms.length);
    discord.sendDm(dana, "what is our on-call rota?");
    const answer = await waitFor(() => discord.posts.find((p) => p.channelId === discord.dmChannel(dana)), "the answer to Dana", 15_000);
    expect(answer.content).toBe(MODEL_KEY_REFUSED_REPLY);

    const dm = await waitFor(() => discordAdminDms()[0], "the admin's DM", 15_000);
    expect(dm).toBe(MODEL_KEY_REFUSED_ADMIN_NOTICE);
    const created = discord.restCalls.filter((c) => c.method === "POST" && c.path === "/users/@me/channels").map((c) => (c.body as { recipient_id?: string }).recipient_id);
    expect(created).toContain(discordAdmin.id);
    expect(logs.count(ALARM)).toBe(before + 1);

    // Erin asks in the guild channel: told the same; the admin is not DMed again.
    const mention = discord.sendMessage({ channelId: GUILD.channel, author: erin, content: `<@${discord.bot.id}> who is on call?` });
    const second = await waitFor(() => discord.posts.find((p) => p.replyTo === mention.id), "the answer to Erin", 15_000);
    await discordAdapter.idle();
    expect(second.content).toBe(MODEL_KEY_REFUSED_REPLY);
    expect(logs.count(ALARM)).toBe(before + 1);
    expect(discordAdminDms()).toEqual([MODEL_KEY_REFUSED_ADMIN_NOTICE]);
    expect(slackAdminDms().map((dms) => dms.length)).toEqual(slackDms);
  });

  it("answers `/cairn learn` with a refused key by saying an admin must fix it, and saves nothing", async () => {
    const responseUrl = slack.responseUrl();
    const payload = { command: "/cairn", text: "learn To roll back a deploy: run deploy rollback, then post in #ops.", team_id: team, channel_id: uniqueId("C"), user_id: "UALICE", response_url: responseUrl, trigger_id: uniqueId("trig") };
    expect((await postSigned(eventsUrl(), payload, { contentType: "application/x-www-form-urlencoded" })).status).toBe(200);
    const answer = await slack.waitFor("the answer to /cairn learn", () => slack.responses.find((r) => responseUrl.endsWith(r.id)), 15_000);
    expect(answer.body.text).toBe(toMrkdwn(learnKeyRefused("the text you pasted")));
    expect(String(answer.body.text)).toContain("ANTHROPIC_API_KEY");
    // The run's one model call was refused, and not retried.
    expect(anthropic.requests).toHaveLength(1);
    const workspace = await getDb().prisma.workspace.findFirst({ where: { platform: "slack", externalId: team } });
    expect(await getDb().prisma.skill.count({ where: { workspaceId: workspace?.id ?? "none" } })).toBe(0);
  });
});
