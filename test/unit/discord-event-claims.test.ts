import { describe, expect, it } from "vitest";
import { captureLogger } from "../fakes/slack.ts";
import { claimer, interactionKey, noticeKey, reactionKey } from "../../src/platforms/discord/event-claims.ts";

describe("claiming a Discord event for this replica", () => {
  it("acts on a claim won, and on a lost one does nothing, logging at debug only", async () => {
    const { log, lines } = captureLogger("trace");
    const claim = claimer({ claim: (key) => Promise.resolve(key === "won") }, log);
    expect(await claim("won")).toBe(true);
    expect(await claim("lost")).toBe(false);
    // pino levels: 20 debug, 30 info.
    expect(lines.filter((l) => l.level > 20)).toEqual([]);
  });

  it("acts anyway when the database cannot answer, with a warning: twice is better than never", async () => {
    const { log, find } = captureLogger();
    const claim = claimer({ claim: () => Promise.reject(new Error("connection refused")) }, log);
    expect(await claim(interactionKey("123"))).toBe(true);
    expect(find("could not claim a discord event; acting on it anyway")).toEqual([expect.objectContaining({ level: 40, key: "discord:interaction:123", err: "connection refused" })]);
  });

  it("names each event the same on every replica, a reaction by what was done to which message by whom", () => {
    expect(noticeKey("42")).toBe("discord:notice:42");
    const added = { targetMessageId: "42", reactor: { externalId: "7" }, emoji: "👎", action: "added" as const };
    expect(reactionKey(added)).toBe("discord:reaction:42:7:👎:added");
    expect(reactionKey({ ...added, action: "removed" })).not.toBe(reactionKey(added));
  });
});
