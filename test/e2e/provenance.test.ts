/**
 * Provenance in every prompt (issue 26, item 3): each shared fact, rule, lesson and skill the model
 * is shown names who taught it and when, and the system prompt says once, in its cached part, that
 * memory is what people said. A person's own profile is shown without; a teacher removed by
 * `forget me ... anonymous` is a former member; a session stored before this keeps its prompt.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";
import { PROVENANCE_FRAMING } from "../../src/agent/prompt.ts";

const SKILL = "---\nname: release-notes\ndescription: Use when writing release notes\n---\n# Release notes\n1. List the merged PRs.\n";

/** The text of the newest user message of a request (where the lessons go). */
function lastUserText(req: RecordedRequest): string {
  const last = req.body.messages.at(-1);
  if (!last || typeof last.content === "string") return String(last?.content ?? "");
  return last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
}

const day = (at: Date): string => at.toISOString().slice(0, 10);
const count = (text: string, part: string): number => text.split(part).length - 1;

forEachDatabase("provenance in every prompt", (getDb) => {
  const h = coreHarness(getDb, { start: true, defaultReply: null });
  const at = (user: string, name: string, thread: string): PlaceOptions => ({ workspace: h.ws, user, channel: "CDEV", isDm: false, thread, name });

  it("names the teacher and date beside each shared item in the next session, and says what memory is once", async () => {
    // Ana teaches a channel fact and a channel skill through the tools.
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "channel", content: "Staging deploys need a second reviewer" }] } }] },
      { toolUse: [{ name: "skill_manage", input: { action: "create", name: "release-notes", content: SKILL, scope: "channel" } }] },
      { text: "saved" },
    );
    await h.core.handle(inboundFor(at("UANA", "Ana Lima", "t1"), "remember how we deploy, and how we write release notes"));
    const db = getDb().prisma;
    const { scope } = await place(getDb(), at("UBOB", "Bob", "t1"));
    const cara = await place(getDb(), at("UCARA", "Cara", "t2"));
    const ana = await db.person.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, externalId: "UANA" } });
    const fact = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "Staging deploys need a second reviewer" } });
    const skill = await db.skill.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, name: "release-notes" } });
    // Bob's team fact and rule, Ana's channel lesson, a fact whose teacher was anonymised, Cara's own profile.
    const base = { workspaceId: scope.workspaceId, source: "tool" } as const;
    await db.memoryEntry.createMany({
      data: [
        { ...base, scope: "team", text: "The on-call rota lives in the ops wiki", createdById: scope.personId, createdAt: new Date("2026-11-30T10:00:00Z") },
        { ...base, scope: "team", kind: "rule", text: "ALWAYS link the incident ticket", quote: "link the ticket please", createdById: scope.personId, createdAt: new Date("2026-10-02T10:00:00Z") },
        { ...base, scope: "team", text: "Billing runs on the first Monday", createdById: null, createdAt: new Date("2026-09-01T10:00:00Z") },
        { ...base, scope: "channel", channelKey: "CDEV", kind: "lesson", text: "Release notes for staging list the migrations first", createdById: ana.id, createdAt: new Date("2026-11-29T10:00:00Z") },
        { ...base, scope: "user", ownerId: cara.scope.personId, text: "Cara prefers short answers", createdById: cara.scope.personId },
      ],
    });

    // Cara's first message in another thread: a new session, a new snapshot.
    h.fake.enqueue({ text: "here you go" });
    await h.core.handle(inboundFor(at("UCARA", "Cara", "t2"), "please draft the release notes for staging"));
    const req = h.fake.lastRequest()!;
    const system = systemText(req);
    expect(system).toContain(`§ Staging deploys need a second reviewer (taught by Ana Lima, ${day(fact.createdAt)})`);
    expect(system).toContain("§ The on-call rota lives in the ops wiki (taught by Bob, 2026-11-30)");
    expect(system).toContain('§ ALWAYS link the incident ticket (team rule since 2026-10-02, taught by Bob; the correction: "link the ticket please")');
    expect(system).toContain("§ Billing runs on the first Monday (taught by a former member, 2026-09-01)");
    expect(system).toContain(`- release-notes: Use when writing release notes (taught by Ana Lima, ${day(skill.createdAt)})`);
    // Bundled skills are cairn's own: nobody here taught them.
    const index = system.slice(system.indexOf("══ SKILLS"), system.indexOf("══ PROFILE"));
    const bundled = index.split("\n").filter((l) => l.startsWith("- ") && !l.startsWith("- release-notes"));
    expect(bundled.length).toBeGreaterThan(0);
    expect(bundled.filter((l) => l.includes("(taught by"))).toEqual([]);
    // The person's own profile: theirs, so no attribution.
    expect(system).toMatch(/§ Cara prefers short answers(\n|$)/);
    // Told once, in the guidance: the cached prefix.
    expect(count(system, PROVENANCE_FRAMING)).toBe(1);
    const sys = req.body.system;
    expect(Array.isArray(sys) ? sys[0]?.text : sys).toContain(PROVENANCE_FRAMING);
    // The lesson that fits the message names its teacher too.
    expect(lastUserText(req)).toMatch(new RegExp(`Release notes for staging list the migrations first \\(channel lesson, id \\w+, taught by Ana Lima, 2026-11-29\\)`));
  });

  it("names a teacher who asked to be forgotten anonymously as a former member, and another workspace's people never", async () => {
    const { scope } = await place(getDb(), at("UDAN", "Dan", "t1"));
    await getDb().prisma.memoryEntry.create({ data: { workspaceId: scope.workspaceId, scope: "team", text: "Backups run nightly at two", source: "tool", createdById: scope.personId } });
    // The same platform id, named otherwise, in another workspace: its name is never this workspace's.
    const other = await place(getDb(), { ...at("UDAN", "Dan Elsewhere", "t1"), workspace: `${h.ws}-other` });
    expect(other.scope.workspaceId).not.toBe(scope.workspaceId);

    h.fake.enqueue({ text: "hi" });
    await h.core.handle(inboundFor(at("UEVA", "Eva", "t2"), "hello"));
    const before = systemText(h.fake.lastRequest()!);
    expect(before).toMatch(/§ Backups run nightly at two \(taught by Dan, \d{4}-\d\d-\d\d\)/);
    expect(before).not.toContain("Elsewhere");

    await h.core.erasure.erasePerson(scope, { anonymize: true });
    h.fake.enqueue({ text: "hi" });
    await h.core.handle(inboundFor(at("UEVA", "Eva", "t3"), "hello"));
    const system = systemText(h.fake.lastRequest()!);
    expect(system).toMatch(/§ Backups run nightly at two \(taught by a former member, \d{4}-\d\d-\d\d\)/);
    expect(system).not.toContain("Dan");
    // Eva's session that was open before the erasure takes a new snapshot too: it named Dan.
    h.fake.enqueue({ text: "hi again" });
    await h.core.handle(inboundFor(at("UEVA", "Eva", "t2"), "hello again"));
    const running = systemText(h.fake.lastRequest()!);
    expect(running).toContain("§ Backups run nightly at two (taught by a former member");
    expect(running).not.toContain("Dan");
  });

  it("keeps the prompt of a session stored before provenance: its snapshot has none of the new text and still serves", async () => {
    h.fake.enqueue({ text: "hi" });
    await h.core.handle(inboundFor(at("UFAY", "Fay", "t1"), "hello"));
    const { scope } = await place(getDb(), at("UFAY", "Fay", "t1"));
    const db = getDb().prisma;
    const session = await db.chatSession.findFirstOrThrow({ where: { conversationId: scope.conversationId } });
    // A snapshot as stored before: the rendered text only, no rule or fact ids, no teachers.
    const old = { shared: "Session started 2026-01-05 09:00 UTC. Place: channel CDEV.\n\n══ TEAM MEMORY ══\n§ Old fact without a teacher", profiles: { [scope.personId]: "══ PROFILE OF FAY ══\n(empty)" } };
    await db.chatSession.update({ where: { id: session.id }, data: { snapshot: JSON.stringify(old) } });
    h.core.sessions.forgetCached();

    h.fake.enqueue({ text: "still here" });
    // Fay again, then Gus, a new speaker in the same session: his profile joins the old snapshot.
    await h.core.handle(inboundFor(at("UFAY", "Fay", "t1"), "and again"));
    expect(systemText(h.fake.lastRequest()!)).toContain(old.shared);
    h.fake.enqueue({ text: "hello Gus" });
    const result = await h.core.handle(inboundFor(at("UGUS", "Gus", "t1"), "me too"));
    expect(result.kind).toBe("reply");
    const system = systemText(h.fake.lastRequest()!);
    expect(system).toContain(old.shared);
    expect(system).toContain("PROFILE OF GUS");
  });
});
