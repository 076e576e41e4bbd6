/**
 * `npm run demo:learning`: a correction becoming an approved team rule that changes the next answer
 * in another channel, step by step, with a fake model (no keys, no network) and a temporary SQLite
 * database. The platform is held in memory (bench/lib/memory-platform.ts) but is a real adapter:
 * every message, reaction and post takes the delivery path Slack and Discord take.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { openDatabase } from "../src/db/client.ts";
import { Core } from "../src/app/core.ts";
import { silentLogger } from "../src/ground/log.ts";
import { accessPolicy } from "../src/admission/access.ts";
import { benchSettings } from "../bench/lib/core.ts";
import { fakeModel, lastUserText, promptText, type Reply } from "../bench/lib/model.ts";
import { MemoryPlatform, type ShownMessage } from "../bench/lib/memory-platform.ts";

const RULE = "ALWAYS install dependencies with `pnpm install`; NEVER with `npm install`.";

/** The fake model: right only when the rule (or the correction) is in front of it. */
function respond(req: Anthropic.MessageCreateParamsNonStreaming): Reply {
  const system = typeof req.system === "string" ? req.system : (req.system ?? []).map((b) => b.text).join("\n");
  if (system.startsWith("You turn a person's correction")) return { text: JSON.stringify({ rule: RULE, same_as: null, contradicts: null }) };
  if (lastUserText(req).includes("══ CORRECTION ══")) return { text: "Sorry, corrected: run `pnpm install`. This team uses pnpm, never npm." };
  return { text: promptText(req).includes("pnpm install") ? "Run `pnpm install` (team rule: pnpm, never npm)." : "Run `npm install`." };
}

const out = (s = "") => process.stdout.write(`${s}\n`);
const show = (m: ShownMessage) => out(`    ${m.fromCairn ? "cairn" : m.author.padEnd(5)} │ ${m.text.replace(/\n/g, "\n          │ ")}`);
let step = 0;
const heading = (s: string) => out(`\n${++step}. ${s}`);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "cairn-demo-"));
  const database = await openDatabase(`file:${join(dir, "demo.db")}`);
  try {
    const settings = benchSettings({ bundledSkillsDir: null, access: accessPolicy({ admins: [], users: [], channels: [], roles: [] }), learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0 } });
    const core = new Core({ database, model: fakeModel(respond), settings, log: silentLogger });
    const chat = new MemoryPlatform("T-demo");
    await chat.start(core.attach(chat));
    out("cairn learning demo: fake model, temporary SQLite database, an in-memory chat with #backend and #frontend.");

    heading("In #backend, ana asks; cairn does not know the team's convention yet.");
    const asked = await chat.say("ana", "C-backend", "How do I install the dependencies?");
    show(asked.message);
    asked.replies.forEach(show);

    heading("ana reacts 👎 to the answer; cairn asks, once, in the thread.");
    await chat.react("ana", asked.replies.at(-1)!, "-1");
    await core.learning.drain();
    const thread = asked.message.id;
    show(chat.cairnSaid("C-backend", thread, "what should I have done")!);

    heading("ana's next message in the thread is the correction; cairn answers again with it applied.");
    const fixed = await chat.say("ana", "C-backend", "No: we use pnpm here. Run `pnpm install`, never `npm install`.", thread);
    show(fixed.message);
    fixed.replies.forEach(show);

    heading("The lesson is distilled (ALWAYS/NEVER, with ana's words) and proposed to the team in the thread.");
    await core.learning.drain();
    const proposal = chat.cairnSaid("C-backend", thread, "React ✅")!;
    show(proposal);

    heading("In #frontend, bo asks the same: the lesson is #backend's only, so cairn still gets it wrong there.");
    const before = await chat.say("bo", "C-frontend", "how do I install deps for the web app?");
    show(before.message);
    before.replies.forEach(show);

    heading("bo (not the corrector) reacts ✅ on the proposal: it becomes a team rule.");
    await chat.react("bo", proposal, "white_check_mark");
    await core.learning.drain();
    show(chat.cairnSaid("C-backend", thread, "Approved by")!);

    heading("A new conversation in #frontend: the rule is in every session's prompt now, and the answer changes.");
    const after = await chat.say("cy", "C-frontend", "how do I install the dependencies for the web app?");
    show(after.message);
    after.replies.forEach(show);

    heading("What the database holds.");
    const rule = await database.prisma.memoryEntry.findFirstOrThrow({ where: { kind: "rule", status: "active" } });
    out(`    team rule ${rule.id}: ${rule.text}`);
    out(`      the correction, in ana's words: "${rule.quote}"`);
    const revisions = await database.prisma.revision.findMany({ where: { entityType: "memory" }, orderBy: { createdAt: "asc" } });
    for (const r of revisions) out(`    revision: ${r.action.padEnd(8)} ${r.entityId} (source ${r.source}${r.reason ? `; ${r.reason}` : ""})`);
    const right = after.replies.some((m) => m.text.includes("pnpm install")) && !before.replies.some((m) => m.text.includes("pnpm install"));
    out(`\n${right ? "The rule changed the next answer in another channel." : "UNEXPECTED: the answer did not change."}`);
    if (!right) process.exitCode = 1;
  } finally {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
