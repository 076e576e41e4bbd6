/**
 * Secrets are never stored, by shape, wherever they stand in a sentence and in every scope: a turn's
 * memory writes to the person's profile, the channel and the team each carry provider tokens,
 * webhook URLs, a connection string and passwords after labels in several languages. The stored
 * rows, their revisions and the next session's prompt lack every value; a public key is stored byte
 * for byte; the model is told what was removed.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, toolResults } from "../support/agent.ts";
import { systemText } from "../fakes/anthropic.ts";

/** Each line: a sentence as people write it, and the made-up secret in it. */
const SECRETS: [string, string][] = [
  ["CI publishes with npm_Q7fK2mX9pL4vR8tY1wZ3bN6cH0jD5sA2eG7k now", "npm_Q7fK2mX9pL4vR8tY1wZ3bN6cH0jD5sA2eG7k"],
  ["the gitlab deploy one is glpat-8Hq2LmZx4Rt7Vb1Nc9Kd and expires in May", "glpat-8Hq2LmZx4Rt7Vb1Nc9Kd"],
  ["billing uses sk_live_51Mz8Qw2Er5Ty7Ui9Op1As3Df for refunds", "sk_live_51Mz8Qw2Er5Ty7Ui9Op1As3Df"],
  ["alerts post to https://hooks.slack.com/services/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 today", "T01AB2CD3/B04EF5GH6/q8W7e6R5t4Y3u2I1o0P9a8S7"],
  ["the bot relays to https://discord.com/api/webhooks/112233445566778899/Zq9-Xw8_Ev7Rb6Tn5Ym4Uk3Il2Op1As0Df9Gh8Jk7", "Zq9-Xw8_Ev7Rb6Tn5Ym4Uk3Il2Op1As0Df9Gh8Jk7"],
  ["reports read from postgres://reporter:Vr4!kq9Zp@db.internal:5432/reports", "Vr4!kq9Zp"],
  ["le mot de passe du wifi invités est Mouette#2026", "Mouette#2026"],
  ["Passwort für den Drucker: Tinte7Blau!", "Tinte7Blau!"],
  ["共有アカウントのパスワードは Kumo#88Sora です", "Kumo#88Sora"],
  ["كلمة المرور للحساب التجريبي: Sahra#4410", "Sahra#4410"],
  ["the signing value Lq8Zt3Vm9Xc2Bn7Wr4Ky6Hs1Pd5Fj0 goes in the header", "Lq8Zt3Vm9Xc2Bn7Wr4Ky6Hs1Pd5Fj0"],
];

const PUBLIC_KEY = "Deploy key for the docs repo: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK7m3Qz9Lw2Vb8Xc4Rt6Yn1Hs5Pd0Fj7Kq3Mz9Wx2Eb docs@ci";

forEachDatabase("secrets are never stored, by shape, in every scope", (getDb) => {
  // Noa is a trusted teacher: her team writes reach the team store itself (issue 26), not only her channel.
  const h = coreHarness(getDb, { start: true, defaultReply: null, settings: { teamWrites: { teachers: ["slack:UNOA"] } } });
  const channel = (thread: string): PlaceOptions => ({ workspace: h.ws, user: "UNOA", channel: "CSEC", isDm: false, thread, name: "Noa" });

  it("redacts every shape before the profile, the channel and the team store it, and keeps a public key as written", async () => {
    const targets = ["user", "channel", "team"] as const;
    // One memory call per scope (a call holds at most 20 operations), then the public key.
    const calls = targets.map((target) => ({ toolUse: [{ name: "memory", input: { operations: SECRETS.map(([sentence]) => ({ action: "add", target, content: `${target}: ${sentence}` })) } }] }));
    h.fake.enqueue(...calls, { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "channel", content: PUBLIC_KEY }] } }] }, { text: "saved" });
    const before = h.fake.requests.length;
    await h.core.handle(inboundFor(channel("t1"), "remember all of this"));
    const results = h.fake.requests.slice(before + 1).map((r) => toolResults(r)[0]!);
    for (const result of results.slice(0, targets.length)) expect(result).toMatchObject({ is_error: false, content: expect.stringContaining("secrets were redacted") });
    expect(results[targets.length]).toMatchObject({ is_error: false });
    expect(results[targets.length]!.content).not.toContain("redacted");

    const db = getDb().prisma;
    const ws = await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    const rows = await db.memoryEntry.findMany({ where: { workspaceId: ws.id } });
    const revisions = JSON.stringify(await db.revision.findMany({ where: { workspaceId: ws.id } }));
    for (const target of targets) expect(rows.filter((r) => r.text.startsWith(`${target}: `))).toHaveLength(SECRETS.length);
    for (const [, secret] of SECRETS) {
      for (const row of rows) expect(row.text).not.toContain(secret);
      expect(revisions).not.toContain(secret);
    }
    expect(rows.filter((r) => r.text.includes("[REDACTED:"))).toHaveLength(targets.length * SECRETS.length);
    expect(rows.map((r) => r.text)).toContain(PUBLIC_KEY);

    // The next session's prompt (profile, channel and team memory) lacks every value too.
    h.fake.enqueue({ text: "hi" });
    await h.core.handle(inboundFor(channel("t2"), "what do you know?"));
    const system = systemText(h.fake.lastRequest()!);
    expect(system).toContain("[REDACTED:npm_token]");
    expect(system).toContain(PUBLIC_KEY);
    for (const [, secret] of SECRETS) expect(system).not.toContain(secret);
  });
});
