/**
 * Lessons: corrections and conventions saved with the memory tool as kind "lesson". They are not in
 * the frozen system prompt; each message is shown the lessons it touches, in its own turn, and only
 * lessons the speaker may see in that place.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, toolResults } from "../support/agent.ts";
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";

const STAGING = "Deploys to staging need a ticket in #ops first";
const BILLING = "The billing service is owned by the payments team";

/** The text of the newest user turn, as the model received it. */
function newestTurn(req: RecordedRequest): string {
  const last = req.body.messages.at(-1)!;
  return typeof last.content === "string" ? last.content : JSON.stringify(last.content);
}

forEachDatabase("lessons", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null } });
  const channel = (user: string, ch = "C-backend"): PlaceOptions => ({ workspace: h.ws, user, channel: ch, isDm: false, name: user });
  const say = async (opts: PlaceOptions, text: string) => {
    const r = await h.core.handle(inboundFor(opts, text));
    if (r.kind !== "reply") throw new Error(`dropped: ${r.reason}`);
    return r.reply;
  };
  const teach = async (opts: PlaceOptions, target: "channel" | "user" | "team", content: string) => {
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target, kind: "lesson", content }] } }] }, { text: "Noted." });
    await say(opts, `No: ${content}`);
    return toolResults(h.fake.requests.at(-1)!)[0]!;
  };

  it("shows a lesson with the messages it is about, never in the system prompt, and not with others", async () => {
    const alice = channel("UALICE");
    const saved = await teach(alice, "channel", STAGING);
    expect(saved.is_error).toBe(false);
    expect(saved.content).toContain(`added lesson to channel: "${STAGING}"`);
    expect(saved.content).toMatch(/channel memory: 0 entries \[0% - 0\/1,500 chars\], 1 lessons/);
    await teach(alice, "channel", BILLING);
    await h.core.command(inboundFor(alice), "new");

    await say(channel("UBOB"), "can I deploy the api to staging today?");
    const related = h.fake.lastRequest()!;
    expect(systemText(related)).not.toContain("staging");
    expect(newestTurn(related)).toContain("LESSONS THAT MAY APPLY");
    expect(newestTurn(related)).toContain(STAGING);
    expect(newestTurn(related)).not.toContain(BILLING);

    await say(channel("UBOB"), "what time is the all-hands?");
    const unrelated = h.fake.lastRequest()!;
    expect(JSON.stringify(unrelated.body)).not.toContain(STAGING);
    expect(JSON.stringify(unrelated.body)).not.toContain(BILLING);
    // The earlier turn is history now, shown as it was said, without the lessons it was shown with.
    expect(JSON.stringify(unrelated.body.messages)).toContain("can I deploy the api to staging today?");
  });

  it("keeps a channel's lessons in that channel and a person's own lessons to that person", async () => {
    await teach(channel("UALICE"), "channel", STAGING);
    await teach(channel("UALICE"), "user", "Alice wants billing answers with invoice numbers");
    await h.core.command(inboundFor(channel("UALICE")), "new");

    await say(channel("UBOB", "C-frontend"), "can I deploy to staging?");
    expect(JSON.stringify(h.fake.lastRequest()!.body)).not.toContain(STAGING);
    await say(channel("UBOB"), "any billing answers with invoice numbers?");
    expect(JSON.stringify(h.fake.lastRequest()!.body)).not.toContain("Alice wants billing answers");
    await say(channel("UALICE"), "any billing answers with invoice numbers?");
    expect(newestTurn(h.fake.lastRequest()!)).toContain("Alice wants billing answers with invoice numbers");
  });

  it("stops showing a lesson as soon as it is forgotten", async () => {
    const dana = channel("UDANA");
    await teach(dana, "user", "Dana wants deploy notes as a checklist");
    await say(dana, "write the deploy notes");
    expect(newestTurn(h.fake.lastRequest()!)).toContain("Dana wants deploy notes as a checklist");
    const lesson = await getDb().prisma.memoryEntry.findFirstOrThrow({ where: { text: "Dana wants deploy notes as a checklist" } });
    expect((await h.core.command(inboundFor(dana), "forget", [lesson.id])).text).toMatch(/^Deleted/);
    await say(dana, "write the deploy notes again");
    expect(JSON.stringify(h.fake.lastRequest()!.body.messages.at(-1))).not.toContain("checklist");
  });

  it("lists lessons in /cairn me without counting them against the profile budget", async () => {
    await teach(channel("UCAROL"), "user", "Carol wants release dates in ISO format");
    const me = await h.core.command(inboundFor(channel("UCAROL")), "me");
    expect(me.text).toContain("(lesson) Carol wants release dates in ISO format");
    expect(me.text).toContain("(0 of 1,375 characters used)");
  });
});
