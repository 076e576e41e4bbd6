/**
 * Semantic recall (issue 30, src/providers/embeddings/), end to end on SQLite and PostgreSQL: a real
 * Core with the fake embeddings server and the fake Anthropic server scripting session_search. A
 * question sharing no word with a message finds it by meaning and the model gets it (a core with
 * embeddings off does not); the vector path keeps the word search's scope; an endpoint down, slow or
 * answering the wrong length costs a turn nothing, is counted and logged, and the backlog drains
 * once it is back; `forget me` takes the person's vectors; /metrics shows the backlog and the calls.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { toolResults } from "../support/agent.ts";
import { channelPlatform } from "../support/channel-platform.ts";
import { drain, embeddingsCore, embeddingsHarness, SPACE } from "../support/embeddings.ts";
import { parsePrometheusText, samplesOf, sumOf } from "../support/prom-text.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import type { Core } from "../../src/app/core.ts";

const ADMIN = "UADMIN";
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] });
const DEADLINE_MS = 200;
/** Shares no word (stop words aside) with any message below: only meaning finds them. */
const QUESTION = "how do we ship the web app";
// "ship" means "deploy", "web app" means "frontend".
const ALIKE = [
  ["ship", "deploy"],
  ["frontend", "web app"],
];

forEachDatabase("embeddings end to end", (getDb) => {
  const h = embeddingsHarness(getDb, { bundledSkillsDir: null, access: ACCESS, providerDeadlineMs: DEADLINE_MS }, ALIKE);
  const db = () => getDb().prisma;
  const thread = (user: string, ws = h.ws): PlaceOptions => ({ workspace: ws, user, channel: "CGEN", isDm: false, thread: "T1", name: user });
  const dm = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name: user });
  /** Where questions are asked: a conversation of its own, so what was said elsewhere is no part of its session. */
  const asker = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: "CASK", isDm: false, name: user });

  const say = async (at: PlaceOptions, text: string): Promise<number> => {
    const r = await h.core.handle(inboundFor(at, text));
    expect(r.kind).toBe("reply");
    return (await db().message.findFirstOrThrow({ where: { text, role: "user", conversation: { workspace: { externalId: at.workspace } } } })).id;
  };
  /** A turn of `at` in which the model calls session_search for `query`, then answers `answer`. */
  async function search(query: string, at: PlaceOptions, core: Core = h.core, answer = "answered") {
    h.anthropic.enqueue({ toolUse: [{ name: "session_search", input: { query, limit: 20 } }] }, { text: answer });
    const r = await core.handle(inboundFor(at, "what did we say?"));
    if (r.kind !== "reply") throw new Error(`no reply: ${JSON.stringify(r)}`);
    const [result] = toolResults(h.anthropic.lastRequest()!);
    expect(result!.is_error, result!.content).toBe(false);
    return { content: result!.content, reply: r.reply.text };
  }
  const metrics = async (core: Core = h.core) => parsePrometheusText(await core.metrics.expose());
  const calls = async (purpose: string, result: string) => sumOf(await metrics(), "cairn_embedding_calls_total", { purpose, result });
  const vectorsOf = (ids: number[]) => db().messageVector.count({ where: { messageId: { in: ids } } });

  it("recalls a lesson by meaning alone when it stands out from the place's others; with embeddings off it is not shown", async () => {
    await say(thread("UANA"), "hello there");
    const ws = await db().workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    const lesson = (text: string) => db().memoryEntry.create({ data: { workspaceId: ws.id, scope: "team", kind: "lesson", text, source: "tool" } });
    // No word in common with the question ("deploy" and "frontend" mean "ship" and "web app" here).
    const deploy = await lesson("Deploy the frontend with zebractl.");
    for (const t of ["Lunch orders close at eleven.", "Office plants are watered on Fridays.", "Parking passes come from reception.", "Holiday requests go through HR.", "Coffee machine gets descaled monthly."]) await lesson(t);
    await drain(h.core.embeddings!.embedder);
    expect(await db().entryVector.count({ where: { entryId: deploy.id, space: SPACE } })).toBe(1);
    const asked = (core: Core, user: string) => {
      h.anthropic.enqueue({ text: "With zebractl." });
      return core.handle(inboundFor({ workspace: h.ws, user, channel: "CLESSON", isDm: false, thread: user, name: user }, `${QUESTION}?`));
    };
    await asked(h.wordsOnly, "UWORDS");
    expect(JSON.stringify(h.anthropic.lastRequest()!.body.messages)).not.toContain("zebractl");
    const before = await calls("lessons", "ok");
    await asked(h.core, "UMEANING");
    expect(JSON.stringify(h.anthropic.lastRequest()!.body.messages)).toContain("Deploy the frontend with zebractl.");
    expect(await calls("lessons", "ok")).toBe(before + 1);
  });

  it("finds by meaning what shares no word with the question, and the model gets it to cite; with embeddings off the same search finds nothing", async () => {
    const id = await say(thread("UANA"), "to deploy the frontend run zebractl release");
    await drain(h.core.embeddings!.embedder);
    expect(await db().messageVector.count({ where: { messageId: id, space: SPACE } })).toBe(1);

    const found = await search(QUESTION, asker("UBEN"), h.core, `Run zebractl release (msg ${id}).`);
    expect(found.content).toContain("to deploy the frontend run zebractl release");
    expect(found.content).toContain(`msg ${id} `);
    expect(found.reply).toContain(`msg ${id}`);
    // The question itself went to the endpoint.
    expect(h.embeddings.requests.some((r) => r.input.includes(QUESTION) && r.dimensions === 256)).toBe(true);
    // The reply's trace keeps the search and what it returned (what `why` shows).
    const reply = await db().message.findFirstOrThrow({ where: { role: "assistant", text: found.reply, conversation: { workspace: { externalId: h.ws } } } });
    const trace = await db().replyTrace.findUniqueOrThrow({ where: { messageId: reply.id } });
    expect(JSON.parse(trace.searches)).toEqual([{ query: QUESTION, messageIds: expect.arrayContaining([id]) }]);

    const words = await search(QUESTION, asker("UBEN"), h.wordsOnly);
    expect(words.content).not.toContain("zebractl");
    expect(words.content).toMatch(/^No earlier messages match/);
  });

  it("keeps the scope: another person's DM, another workspace's messages and a kept channel the asker is not in never come back by meaning", async () => {
    const other = `${h.ws}-other`;
    const bens = await say(dm("UBEN"), "deploy the frontend with zebractl bensecret");
    await say(thread("UANA", other), "deploy the frontend with zebractl otherworkspace");
    // A listened channel Ana is in and Carl is not.
    const p = channelPlatform("slack", h.ws);
    p.history.set("CPLAN", [p.message("CPLAN", "300.1", "UANA", "frontend deploys use zebractl canary plankept", new Date(Date.now() - 60_000))]);
    p.members.set("CPLAN", new Set([ADMIN, "UANA"]));
    h.core.attach(p);
    expect((await h.core.command(inboundFor({ workspace: h.ws, user: ADMIN, channel: "CPLAN", isDm: false }), "listen", ["on"])).outcome).toBe("done");
    await h.core.learning.drain();
    const kept = await db().message.findFirstOrThrow({ where: { text: { contains: "plankept" }, role: "channel" } });
    await drain(h.core.embeddings!.embedder);
    expect(await vectorsOf([bens, kept.id])).toBe(2);

    const ana = (await search(QUESTION, asker("UANA"))).content;
    expect(ana).toContain("plankept");
    for (const secret of ["bensecret", "otherworkspace"]) expect(ana).not.toContain(secret);
    const carl = (await search(QUESTION, asker("UCARL"))).content;
    for (const secret of ["bensecret", "otherworkspace", "plankept"]) expect(carl).not.toContain(secret);
    // Ben finds his own DM the same way: the vector is there, only scope kept it from the others.
    const ben = (await search(QUESTION, asker("UBEN"))).content;
    expect(ben).toContain("bensecret");
    expect(ben).not.toContain("plankept");
  });

  it("an endpoint down or slow costs the turn nothing: word results are given, the query counted failed or late, and the backlog drains once it is back", async () => {
    await drain(h.core.embeddings!.embedder);
    const embedder = h.core.embeddings!.embedder;

    h.embeddings.failWith = 503;
    const downId = await say(thread("UANA"), "the web app status page is green");
    const failedBefore = await calls("search", "failed");
    const down = await search("status of the web app", asker("UBEN"), h.core, "It is green.");
    // Snippets mark the words matched («web»): the message is known by its id.
    expect(down.content).toContain(`msg ${downId} `);
    expect(down.reply).toBe("It is green.");
    expect(h.embeddings.requests.some((r) => r.input.includes("status of the web app"))).toBe(true);
    expect(await calls("search", "failed")).toBe(failedBefore + 1);
    expect(await embedder.step()).toBe("failed");
    expect(h.logs.lines().some((l) => l.level === 50 && String(l.err).includes("503"))).toBe(true);

    h.embeddings.failWith = null;
    h.embeddings.delayMs = 1000;
    const slowId = await say(thread("UANA"), "the web app changelog lives in the wiki");
    const lateBefore = await calls("search", "late");
    const slow = await search("changelog of the web app", asker("UBEN"), h.core, "In the wiki.");
    expect(slow.content).toContain(`msg ${slowId} `);
    expect(slow.reply).toBe("In the wiki.");
    expect(h.embeddings.requests.some((r) => r.input.includes("changelog of the web app"))).toBe(true);
    expect(await calls("search", "late")).toBe(lateBefore + 1);

    // Everything stored meanwhile, questions and replies included, waits for its vector.
    const meanwhile = (await db().message.findMany({ where: { id: { gte: downId }, role: { in: ["user", "assistant"] } }, select: { id: true } })).map((m) => m.id);
    expect(meanwhile).toContain(slowId);
    expect(await vectorsOf(meanwhile)).toBe(0);

    h.embeddings.delayMs = 0;
    await drain(embedder);
    expect(await vectorsOf(meanwhile)).toBe(meanwhile.length);
    expect((await h.core.embeddings!.store.backlog(SPACE)).messages).toBe(0);
  });

  it("a model answering the wrong length: the step fails, nothing is stored, the failure is counted and the log names the dimension", async () => {
    await drain(h.core.embeddings!.embedder);
    h.embeddings.forceDimensions = 128;
    const failedBefore = await calls("backfill", "failed");
    const logged = h.logs.lines().length;
    const id = await say(thread("UANA"), "the frontend build uses zebractl too");
    expect(await h.core.embeddings!.embedder.step()).toBe("failed");
    expect(await db().messageVector.count({ where: { messageId: { gte: id } } })).toBe(0);
    expect(await db().messageVector.count({ where: { NOT: { space: SPACE } } })).toBe(0);
    expect(await calls("backfill", "failed")).toBe(failedBefore + 1);
    const errors = h.logs.lines().slice(logged).filter((l) => l.msg === "embeddings: the backfill could not embed; trying again later");
    expect(errors.map((l) => String(l.err))).toEqual([expect.stringMatching(/fake-embed answered a vector of 128 dimensions where 256 were expected: set CAIRN_EMBEDDINGS_DIMENSIONS/)]);
    // A search meanwhile goes on by words.
    expect((await search("zebractl build", asker("UBEN"))).content).toContain(`msg ${id} `);

    h.embeddings.forceDimensions = null;
    await drain(h.core.embeddings!.embedder);
    expect(await db().messageVector.count({ where: { messageId: id, space: SPACE } })).toBe(1);
  });

  it("forget me removes the person's message vectors, and they never come back by meaning or by the backfill", async () => {
    await say(dm("UCARL"), "carl deploys the frontend with zebractl carlsecret");
    await say(thread("UCARL"), "carl frontend deploy notes carlthread");
    await drain(h.core.embeddings!.embedder);
    const ws = await db().workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    const carl = await db().person.findFirstOrThrow({ where: { externalId: "UCARL", workspaceId: ws.id } });
    const dmConversation = await db().conversation.findFirstOrThrow({ where: { workspaceId: ws.id, isDm: true, channelId: "D-UCARL" } });
    const his = (await db().message.findMany({ where: { workspaceId: ws.id, OR: [{ authorId: carl.id }, { conversationId: dmConversation.id }] }, select: { id: true } })).map((m) => m.id);
    expect(his.length).toBeGreaterThanOrEqual(3);
    expect(await vectorsOf(his)).toBe(his.length);
    expect((await search(QUESTION, asker("UANA"))).content).toContain("carlthread");

    await h.core.command(inboundFor(dm("UCARL")), "forget", ["me"]);
    expect((await h.core.command(inboundFor(dm("UCARL")), "forget", ["me", "confirm"])).outcome).toBe("done");
    expect(await vectorsOf(his)).toBe(0);
    await drain(h.core.embeddings!.embedder);
    expect(await vectorsOf(his)).toBe(0);
    const after = (await search(QUESTION, asker("UANA"))).content;
    expect(after).not.toContain("carlthread");
    for (const id of his) expect(after).not.toContain(`msg ${id} `);
  });

  it("/metrics shows the backlog by kind and the embedding calls", async () => {
    await say(thread("UANA"), "a message still to embed");
    // A core of its own: the backlog is counted at most every 30 s, so a fresh one counts now.
    const fresh = embeddingsCore(getDb(), h.anthropic, h.embeddings, h.logs.log, { bundledSkillsDir: null });
    const waiting = await fresh.embeddings!.store.backlog(SPACE);
    expect(waiting.messages).toBeGreaterThan(0);
    let backlog: number[] = [];
    for (let i = 0; i < 50 && backlog.length === 0; i++) {
      // The first scrape starts the count; a later one shows it.
      backlog = samplesOf(await metrics(fresh), "cairn_embedding_backlog", { kind: "messages" }).map((s) => s.value);
      if (backlog.length === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(backlog).toEqual([waiting.messages]);
    expect(samplesOf(await metrics(fresh), "cairn_embedding_backlog", { kind: "entries" }).map((s) => s.value)).toEqual([waiting.entries]);

    await drain(h.core.embeddings!.embedder);
    const m = await metrics();
    expect(sumOf(m, "cairn_embedding_calls_total", { purpose: "backfill", result: "ok" })).toBeGreaterThan(0);
    expect(m.get("cairn_embedding_calls_total")!.type).toBe("counter");
    expect(m.get("cairn_embedding_backlog")!.type).toBe("gauge");
    // Embeddings off: no backlog at all, rather than a zero that says all is embedded.
    expect(samplesOf(await metrics(h.wordsOnly), "cairn_embedding_backlog")).toEqual([]);
  });
});
