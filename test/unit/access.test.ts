import { describe, expect, it } from "vitest";
import { accessPolicy, checkAccess, isAdmin, OPEN_POLICY } from "../../src/admission/access.ts";
import { limitText } from "../../src/admission/rate-limit.ts";
import type { Inbound } from "../../src/ground/types.ts";

const msg = (user: string, channel: string, isDm = false, roles?: string[]): Pick<Inbound, "platform" | "author" | "channel"> => ({
  platform: "discord",
  author: { externalId: user, ...(roles ? { roles } : {}) },
  channel: { externalId: channel, isDm },
});

describe("access rules", () => {
  it("lets everyone in when nothing is configured", () => {
    expect(checkAccess(OPEN_POLICY, msg("1", "C1"))).toEqual({ ok: true });
  });

  it("allows listed users or holders of a listed role, refusing others with an explanation", () => {
    const policy = accessPolicy({ admins: [], users: ["discord:1"], channels: [], roles: ["discord:R9"] });
    expect(checkAccess(policy, msg("1", "C1")).ok).toBe(true);
    expect(checkAccess(policy, msg("2", "C1", false, ["R9"])).ok).toBe(true);
    const refused = checkAccess(policy, msg("2", "C1", false, ["R1"]));
    expect(refused).toMatchObject({ ok: false, reason: "user" });
    if (!refused.ok) expect(refused.text).toMatch(/isn't enabled for you/);
    // Ids are platform-prefixed: the same raw id on Slack is someone else.
    expect(checkAccess(policy, { ...msg("1", "C1"), platform: "slack" }).ok).toBe(false);
  });

  it("limits channels but not DMs, and always lets admins through", () => {
    const policy = accessPolicy({ admins: ["discord:9"], users: [], channels: ["discord:C1"], roles: [] });
    expect(checkAccess(policy, msg("2", "C1")).ok).toBe(true);
    expect(checkAccess(policy, msg("2", "C2"))).toMatchObject({ ok: false, reason: "channel" });
    expect(checkAccess(policy, msg("2", "D7", true)).ok).toBe(true);
    expect(checkAccess(policy, msg("9", "C2")).ok).toBe(true);
    expect(isAdmin(policy, "discord", "9")).toBe(true);
    expect(isAdmin(policy, "slack", "9")).toBe(false);
  });
});

describe("rate limit reply", () => {
  it("says the limit and when to return, in whole minutes", () => {
    expect(limitText(3, 90_000)).toBe("You've reached the limit of 3 messages per hour. Please try again in about 2 minutes.");
    expect(limitText(120, 5_000)).toBe("You've reached the limit of 120 messages per hour. Please try again in about 1 minute.");
  });
});
