/**
 * A command typed without its slash ("forget me confirm") is never a turn: the model is not asked
 * (it could only chat, or claim it was done), nothing changes, and the person is pointed to the
 * command. A sentence that merely starts with a command word is chat, as before.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import type { HandleResult } from "../../src/ground/types.ts";

function replyOf(result: HandleResult): { status: string; text: string } {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply;
}

forEachDatabase("commands typed as messages", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null } });
  const dm = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name: user });
  const carried = (words: string) => h.fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(words));

  it("answers `forget me` and `forget me confirm` typed as messages by pointing to the command: no model call, nothing erased", async () => {
    const alice = dm("UALICE");
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Alice drinks tea" }] } }] }, { text: "Noted." });
    expect(replyOf(await h.core.handle(inboundFor(alice, "remember that I drink tea"))).text).toBe("Noted.");
    const asked = h.fake.requests.length;

    for (const line of ["forget me", "forget me confirm", "Forget me confirm anonymous.", "/cairn forget me confirm"]) {
      const reply = replyOf(await h.core.handle(inboundFor(alice, line)));
      expect(reply.status).toBe("command");
      const words = line.replace(/^\/cairn /, "").replace(/\.$/, "").toLowerCase();
      expect(reply.text).toContain(`Did you mean \`/cairn ${words}\`? I did not run it`);
    }
    expect(h.fake.requests).toHaveLength(asked);
    expect(carried("forget me")).toEqual([]);
    // Nothing was erased: the entry is there, and no erasure was even requested.
    const db = getDb().prisma;
    const workspaceId = (await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id;
    expect(await db.memoryEntry.count({ where: { workspaceId, text: "Alice drinks tea" } })).toBe(1);
  });

  it("points to changes with an id (approve, rollback, forget <id>), and to read-only commands in a channel (run in a DM: typed-command-platforms.test.ts)", async () => {
    const bob = dm("UBOB");
    const inChannel: PlaceOptions = { workspace: h.ws, user: "UBOB", channel: "C-general", isDm: false, thread: "t-1", name: "UBOB" };
    const cases: [string, string, PlaceOptions][] = [
      ["approve cm1a2b3c4d5e6f7g8h9i0j1k2", "/cairn approve cm1a2b3c4d5e6f7g8h9i0j1k2", bob],
      ["rollback 7c1f9a", "/cairn rollback 7c1f9a", bob],
      ["forget cm1a2b", "/cairn forget cm1a2b", bob],
      ["keep both cm1a2b3c", "/cairn keep both cm1a2b3c", bob],
      ["skills", "/cairn skills", inChannel],
      ["cairn, listen status", "/cairn listen status", inChannel],
    ];
    for (const [line, command, where] of cases) {
      const reply = replyOf(await h.core.handle(inboundFor(where, line)));
      expect(reply, line).toMatchObject({ status: "command" });
      expect(reply.text).toContain(`\`${command}\``);
    }
    expect(h.fake.requests).toEqual([]);
  });

  it("sends a sentence that starts with a command word to the model, as chat", async () => {
    const carol = dm("UCAROL");
    const chat = ["forget about it, the deploy is fine", "forget me not is a flower", "approve this plan?", "restore backups tonight", "me", "why", "help me write a query"];
    for (const line of chat) {
      h.fake.enqueue({ text: `re: ${line}` });
      expect(replyOf(await h.core.handle(inboundFor(carol, line))), line).toMatchObject({ status: "ok", text: `re: ${line}` });
    }
    expect(h.fake.requests).toHaveLength(chat.length);
    expect(JSON.stringify(h.fake.lastRequest()!.body.messages)).toContain("forget about it, the deploy is fine");
  });
});
