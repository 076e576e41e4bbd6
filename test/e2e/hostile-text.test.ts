/**
 * Text no platform should have sent, handled the same on both databases: NUL characters, lone
 * surrogates, messages with nothing visible and messages too long to read whole, from the person
 * and from the model; and the same characters in names, ids and the model's tool arguments.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import type { HandleResult } from "../../src/ground/types.ts";

function textOf(result: HandleResult): string {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply.text;
}

/** Everything the model was sent in the last user turn, as text. */
const lastAsked = (body: { messages: { content: unknown }[] }): string => JSON.stringify(body.messages.at(-1)?.content ?? "");

forEachDatabase("hostile text", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, maxMessageChars: 1_000 } });
  const dm = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name: user });
  const stored = async (platformId: string) => {
    const workspaceId = (await getDb().prisma.workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id;
    return getDb().prisma.message.findFirstOrThrow({ where: { platformId, workspaceId } });
  };

  it("keeps a message with NUL characters, visibly, and answers it", async () => {
    h.fake.enqueue({ text: "Got it." });
    expect(textOf(await h.core.handle(inboundFor(dm("UNUL"), "path is a\u0000b\u0000c", "nul1")))).toBe("Got it.");
    expect((await stored("nul1")).text).toBe("path is a\u2400b\u2400c");
    expect(lastAsked(h.fake.lastRequest()!.body)).toContain("a\u2400b\u2400c");
  });

  it("turns lone surrogates into U+FFFD, in the person's message and in the model's reply", async () => {
    h.fake.enqueue({ text: "half an emoji: \uD83D and a\u0000b" });
    const reply = textOf(await h.core.handle(inboundFor(dm("USUR"), "cut emoji \uD83D", "sur1")));
    expect(reply).toBe("half an emoji: \uFFFD and a\u2400b");
    expect((await stored("sur1")).text).toBe("cut emoji \uFFFD");
    expect(/[\uD800-\uDFFF]/.test(reply)).toBe(false);
    const answer = await getDb().prisma.message.findFirstOrThrow({ where: { replyToId: (await stored("sur1")).id, role: "assistant" } });
    expect(answer.text).toBe("half an emoji: \uFFFD and a\u2400b");
  });

  it("drops a message with nothing visible before any model call or storage", async () => {
    for (const [i, text] of ["\u200B\u200B", " \u2060 \uFEFF ", "\u200D\n\u200C"].entries()) {
      expect(await h.core.handle(inboundFor(dm("UZW"), text, `zw${i}`))).toEqual({ kind: "dropped", reason: "empty" });
    }
    expect(h.fake.requests).toHaveLength(0);
    expect(await getDb().prisma.message.count({ where: { platformId: { in: ["zw0", "zw1", "zw2"] } } })).toBe(0);
  });

  it("reads the first part of an over-long message, says what it left out, and keeps no more than it read", async () => {
    h.fake.enqueue({ text: "Here is my answer." });
    const long = `${"a".repeat(999)}\uD83D\uDE00${"b".repeat(49_000)}`;
    const reply = textOf(await h.core.handle(inboundFor(dm("ULONG"), long, "long1")));
    expect(reply).toMatch(/^\(Your message was longer than I read at once: I read the first 1,000 characters and left out the last 49,002\./);
    expect(reply.endsWith("\n\nHere is my answer.")).toBe(true);
    // Cut before the emoji rather than through it.
    expect((await stored("long1")).text).toBe("a".repeat(999));
    const asked = lastAsked(h.fake.lastRequest()!.body);
    expect(asked).toContain("a".repeat(999));
    expect(asked).not.toContain("b");
  });
});

forEachDatabase("hostile text beyond the message", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null } });

  it("keeps names, ids and model-written memory with NUL and lone surrogates, and answers", async () => {
    const odd = "a\u0000b\uD83D";
    const inbound = inboundFor({ workspace: `${h.ws}${odd}`, user: `U${odd}`, channel: `C${odd}`, isDm: false, thread: `t${odd}`, name: `Dana${odd}` }, `hello ${odd}`, `m${odd}`);
    inbound.workspace.name = `Acme${odd}`;
    inbound.channel.name = `general${odd}`;
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: `Goes by ${odd}` }] } }] },
      { text: `Noted, ${odd}.` },
    );
    const result = await h.core.handle(inbound);
    expect(textOf(result)).toBe("Noted, a\u2400b\uFFFD.");
    // Every string the platform sent is stored as the message text is: the same on both databases.
    const workspace = await getDb().prisma.workspace.findFirstOrThrow({ where: { externalId: `${h.ws}a\u2400b\uFFFD` } });
    expect(workspace.name).toBe("Acmea\u2400b\uFFFD");
    const person = await getDb().prisma.person.findFirstOrThrow({ where: { workspaceId: workspace.id, externalId: "Ua\u2400b\uFFFD" } });
    expect(person.displayName).toBe("Danaa\u2400b\uFFFD");
    const message = await getDb().prisma.message.findFirstOrThrow({ where: { workspaceId: workspace.id, platformId: "ma\u2400b\uFFFD" } });
    expect(message.text).toBe("hello a\u2400b\uFFFD");
    const entries = await getDb().prisma.memoryEntry.findMany({ where: { workspaceId: workspace.id } });
    expect(entries.map((e) => e.text)).toContain("Goes by a\u2400b\uFFFD");
  });
});
