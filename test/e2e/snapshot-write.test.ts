/**
 * A session's snapshot is written while the model answers, not before it is called
 * (turn/snapshot.ts `saved`): a write that fails costs the answer nothing, and the next turn takes
 * the snapshot again. The database refuses the write here (a trigger), as a full disk or a lost
 * connection would.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { systemText } from "../fakes/anthropic.ts";
import type { HandleResult, Outbound } from "../../src/ground/types.ts";

function replyOf(result: HandleResult): Outbound {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply;
}

forEachDatabase("a session's snapshot written while the model answers", (getDb) => {
  const h = coreHarness(getDb, { start: true, defaultReply: "noted" });

  async function refuseSnapshots(on: boolean): Promise<void> {
    const db = getDb();
    const run = (sql: string) => db.prisma.$executeRawUnsafe(sql);
    if (db.provider === "sqlite") {
      await run(on ? `CREATE TRIGGER refuse_snapshot BEFORE UPDATE OF snapshot ON ChatSession BEGIN SELECT RAISE(ABORT, 'snapshot refused'); END` : `DROP TRIGGER refuse_snapshot`);
    } else if (on) {
      await run(`CREATE OR REPLACE FUNCTION refuse_snapshot() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'snapshot refused'; END $$ LANGUAGE plpgsql`);
      await run(`CREATE TRIGGER refuse_snapshot BEFORE UPDATE OF snapshot ON "ChatSession" FOR EACH ROW EXECUTE FUNCTION refuse_snapshot()`);
    } else {
      await run(`DROP TRIGGER refuse_snapshot ON "ChatSession"`);
    }
  }

  it("answers though the snapshot could not be written, and the next turn takes it again and writes it", async () => {
    const db = getDb().prisma;
    const place: PlaceOptions = { workspace: h.ws, user: "U-SNAP", channel: uniqueId("C"), isDm: false, name: "Sam" };
    await refuseSnapshots(true);
    let first: Outbound;
    try {
      first = replyOf(await h.core.handle(inboundFor(place, "what is our deploy day?")));
    } finally {
      await refuseSnapshots(false);
    }
    expect(first).toMatchObject({ status: "ok", text: "noted" });
    const firstSystem = systemText(h.fake.lastRequest()!);
    const session = await db.chatSession.findFirstOrThrow({ where: { conversationId: first.conversationId! } });
    expect(session.snapshot).toBeNull();
    // The answer and its message are stored as in any turn.
    const stored = await db.message.findMany({ where: { conversationId: first.conversationId! }, orderBy: { id: "asc" } });
    expect(stored.map((m) => [m.role, m.text, m.status])).toEqual([
      ["user", "what is our deploy day?", "answered"],
      ["assistant", "noted", "sent"],
    ]);

    const second = replyOf(await h.core.handle(inboundFor(place, "and the freeze?")));
    expect(second).toMatchObject({ status: "ok", conversationId: first.conversationId });
    const again = await db.chatSession.findUniqueOrThrow({ where: { id: session.id } });
    expect(again.endedAt).toBeNull();
    expect(again.snapshot).not.toBeNull();
    // Taken again from the same memory, the prompt is the one the first turn was sent.
    expect(systemText(h.fake.lastRequest()!)).toBe(firstSystem);
  });
});
