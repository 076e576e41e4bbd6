/**
 * A contradiction through the real Slack adapter and the fake Slack (issue 27, item 2): Ana tells
 * cairn the team's deploy freeze is on Thursdays in #eng; Bob, in #ops, says his channel's is on
 * Fridays. The check (the fake Messages API as nominator) names the contradiction, both entries
 * are marked, and the question is posted in Bob's thread as blocks with Keep new / Keep old / Keep
 * both. A click runs `keep` as the clicker: Cara's Keep new settles it, answered to her alone, the
 * team fact superseded and kept; a second click finds nothing left. (Who may settle a dispute is
 * the core's rule, proven in memory-validity.test.ts.) Both databases.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { isCheck, weekdayNominator } from "../support/nominator.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { blockActions, captureLogger, eventCallback, postInteraction, postSigned, SIGNING_SECRET, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { startSlack, type SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";
import { DEFAULT_LEARNING } from "../../src/learning/settings.ts";
import type { Core } from "../../src/app/core.ts";

const Block = z.looseObject({ type: z.string(), text: z.looseObject({ text: z.string() }).optional(), elements: z.array(z.looseObject({ value: z.string().optional(), action_id: z.string().optional() })).optional() });

forEachDatabase("a contradiction asked on Slack", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let adapter: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, teamWrites: { mode: "open", teachers: [] }, learning: { ...DEFAULT_LEARNING, reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0, contradictions: true } });
    adapter = await startSlack(core, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), logs.log);
    eventsUrl = `http://127.0.0.1:${adapter.port}/slack/events`;
  });
  afterAll(async () => {
    await adapter?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault((r) => (isCheck(r) ? weekdayNominator(r) : { text: "Saved." }));
    slack.reset();
    team = uniqueId("T");
    for (const [id, name] of [["UANA", "Ana"], ["UBOB", "Bob"], ["UCARA", "Cara"]]) slack.addUser({ id: id!, displayName: name! });
  });

  const say = async (user: string, channel: string, text: string, content: string, target: "team" | "channel") => {
    anthropic.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target, content }] } }] }, { text: "Saved." });
    const ts = slack.nextTs();
    expect((await postSigned(eventsUrl, eventCallback(team, { type: "app_mention", channel, user, text: `<@${slack.bot.userId}> ${text}`, ts, event_ts: ts }))).status).toBe(200);
    await waitUntil(`the answer to ${ts}`, () => logs.find("reply posted", (l) => l.ts === ts).length > 0, 15_000);
    await core.learning.drain();
    return ts;
  };

  it("asks in Bob's thread with Keep buttons; Cara's Keep new supersedes the team fact, answered to her alone", async () => {
    const eng = `C${randomBytes(4).toString("hex").toUpperCase()}`;
    const ops = `C${randomBytes(4).toString("hex").toUpperCase()}`;
    await say("UANA", eng, "remember for the team: the freeze is on Thursdays", "The deploy freeze is on Thursdays", "team");
    const bobTs = await say("UBOB", ops, "here the freeze is on Fridays", "Our deploy freeze is on Fridays", "channel");
    expect(anthropic.requests.filter(isCheck).length).toBeGreaterThanOrEqual(1);

    const db = getDb().prisma;
    const ws = await db.workspace.findFirstOrThrow({ where: { externalId: team } });
    const teamFact = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: ws.id, scope: "team" } });
    const chanFact = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: ws.id, scope: "channel" } });
    expect([teamFact.conflictWithId, chanFact.conflictWithId]).toEqual([chanFact.id, teamFact.id]);

    // The question: in Bob's thread in #ops, as blocks with the three buttons and the typed commands.
    const question = slack.messages(ops).find((m) => (m.user === slack.bot.userId || m.bot_id) && JSON.stringify(m.blocks ?? m.text).includes("Which is right?"))!;
    expect(question.thread_ts).toBe(bobTs);
    const blocks = z.array(Block).parse(question.blocks);
    const body = blocks.flatMap((b) => (b.text ? [b.text.text] : [])).join("\n");
    expect(body).toContain('Bob said: "Our deploy freeze is on Fridays"');
    expect(body).toContain('The team fact from Ana says: "The deploy freeze is on Thursdays"');
    expect(body).toContain(`/cairn keep new ${chanFact.id}`);
    const buttons = blocks.filter((b) => b.type === "actions").flatMap((b) => b.elements ?? []);
    expect(buttons.map((b) => b.value)).toEqual([`keep new ${chanFact.id}`, `keep old ${chanFact.id}`, `keep both ${chanFact.id}`]);
    expect(slack.messages(eng).some((m) => JSON.stringify(m.blocks ?? m.text).includes("Which is right?"))).toBe(false);

    // Cara clicks Keep new in #ops: the command runs as her, answered to her alone.
    const keepNew = buttons[0]!;
    const before = slack.callsTo("chat.postEphemeral").length;
    const payload = blockActions({ teamId: team, user: "UCARA", channel: ops, messageTs: question.ts, messageUser: slack.bot.userId, actionId: keepNew.action_id!, value: keepNew.value! });
    expect((await postInteraction(eventsUrl, payload)).status).toBe(200);
    const shown = await slack.waitFor("the click's answer", () => slack.callsTo("chat.postEphemeral")[before]);
    expect(shown.args).toMatchObject({ channel: ops, user: "UCARA" });
    expect(String(shown.args.text)).toContain('Kept the new one: "Our deploy freeze is on Fridays"');
    const cara = await db.person.findFirstOrThrow({ where: { workspaceId: ws.id, externalId: "UCARA" } });
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: teamFact.id } })).toMatchObject({ status: "superseded", supersededById: chanFact.id, text: "The deploy freeze is on Thursdays" });
    expect(await db.revision.findFirst({ where: { entityId: teamFact.id, action: "supersede", actorId: cara.id } })).not.toBeNull();
    // A second click finds nothing left to settle.
    const again = slack.callsTo("chat.postEphemeral").length;
    expect((await postInteraction(eventsUrl, blockActions({ teamId: team, user: "UCARA", channel: ops, messageTs: question.ts, messageUser: slack.bot.userId, actionId: buttons[1]!.action_id!, value: buttons[1]!.value! }))).status).toBe(200);
    const second = await slack.waitFor("the second click's answer", () => slack.callsTo("chat.postEphemeral")[again]);
    expect(String(second.args.text)).toContain("No open disagreement");
  });
});
