/**
 * A seeded, reproducible scope fuzzer: several workspaces (Slack teams and Discord guilds), people,
 * DMs and channel threads. Everyone plants unique markers (DM messages, profile entries, channel
 * messages, channel and team memory and lessons, private, channel and team skills); then random people talk in random places while the fake
 * model randomly searches for markers. Every prompt the model receives is checked: a marker may
 * appear only where its scope allows; so is every `why` someone of the workspace asks about an answer. Used by `npm test` (small seed) and the benchmark (large).
 *
 * Approval states (issue 26): a team write of someone not trusted to share alone is a "proposed"
 * marker, allowed only where it was said (its channel; from a DM, its author) until someone else
 * approves it (✅ on cairn's reply, or `approve <id>`); the proposer's own approvals, tried too,
 * change nothing. The first person of each workspace is a trusted teacher (`fuzzTeachers`): their
 * team writes are plain team markers.
 *
 * Embeddings (issue 30, `vectors`): every marker said as a message gets a paraphrase, one made-up
 * word the fake embeddings server maps to the marker's word (`alike`). session_search probes ask by
 * the paraphrase alone: it shares no word with any stored text, so whatever they find came through
 * the vector path, under the same checks. The backfill is drained before each probe. Each probe is
 * also asked of the vector query itself (nearestMessages), whose rows are checked against who may
 * see their conversation: the search reads what hits show of their conversations in scope again
 * (`display`), which would hide a vector query that forgot its own scope clause from the prompts.
 */
import type { Core } from "../../src/app/core.ts";
import type { Database } from "../../src/db/client.ts";
import type { Platform } from "../../src/ground/types.ts";
import { scopeOf, scopeOfWorkspace } from "../../src/history/store/store.ts";
import { nearestMessages } from "../../src/history/store/search-vectors.ts";
import type { FakeAnthropic, RecordedRequest, Step } from "../fakes/anthropic.ts";
import type { FakeEmbeddings } from "../fakes/embeddings.ts";
import { systemText } from "../fakes/anthropic.ts";
import { inboundFor, type PlaceOptions } from "./db.ts";
import { channelPlatform } from "./channel-platform.ts";
import { sessionKey } from "../../src/history/store/search.ts";

export interface FuzzOptions {
  seed: number;
  workspaces: number;
  people: number;
  channels: number;
  turns: number;
  /** Prefix for workspace ids, so several runs can share one database. */
  runId: string;
  /** Listened channels per workspace, whose members change while people talk (default 2). */
  listened?: number;
  /**
   * The embeddings server the core's `embeddings` settings point at: turns on the paraphrase probes,
   * which only the vector path can answer. Unset: words alone, as before.
   */
  vectors?: FakeEmbeddings;
}

export interface FuzzReport {
  promptsChecked: number;
  searches: number;
  markers: number;
  /** Times a listened channel's marker reached someone who could read the channel (the search does find them). */
  knowledgeSeen: number;
  /** `why` answers checked (about a picked answer or the asker's latest), and how many explained an answer. */
  whyChecked: number;
  whyExplained: number;
  /** Approvals tried (by the proposer, which must do nothing, or by a teammate) and proposals shared. */
  approvals: number;
  shared: number;
  /** session_search calls in its other modes (session, around, recent) or with filters, and how many showed messages. */
  modeProbes: number;
  modeFinds: number;
  /** `history <first 6-9 characters of an entry's id>`: tried, answered with the entry, answered with a list of candidates. */
  shortIds: { probes: number; found: number; ambiguous: number };
  /**
   * Paraphrase probes (embeddings on), and how many showed a marker's message that shares no word
   * with the query (a find of the vector path); 0 and 0 with embeddings off. `rows`: what the vector
   * query itself returned for the probes, each checked; `guarded`: those of a DM or a listened
   * channel (the rows its scope clause decides).
   */
  vectors: { probes: number; finds: number; rows: number; guarded: number };
  violations: string[];
}

/** The trusted teachers of a run (CAIRN_TEACHERS): the first person of each workspace. */
export function fuzzTeachers(opts: Pick<FuzzOptions, "workspaces" | "runId">): string[] {
  return Array.from({ length: opts.workspaces }, (_, i) => `${i % 2 === 0 ? "slack" : "discord"}:${opts.runId}-w${i}-p0`);
}

type MarkerKind = "dm" | "profile" | "channelMsg" | "channelMem" | "team" | "knowledge" | "proposed";
interface Marker {
  token: string;
  kind: MarkerKind;
  ws: string;
  person: string;
  channel: string;
  /** A proposed marker someone other than its author approved: the workspace's from then on. */
  shared?: boolean;
  /** A proposed marker said in its author's DM (kept as theirs). */
  fromDm?: boolean;
  /** Its text was replaced: the old text is superseded history (memory_history). */
  changed?: boolean;
  /** A message's marker: the message's text. */
  said?: string;
}
interface Where {
  ws: string;
  person: string;
  isDm: boolean;
  channel: string;
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Words lessons are about and random turns ask about, so lessons are recalled all over the place. */
const TOPICS = ["deploys", "billing", "oncall", "releases", "invoices"];

/** A skill whose description carries the marker: the skills index of new sessions shows it. */
function skillCall(m: Marker, scope: "user" | "channel" | "team"): { name: string; input: unknown } {
  const name = `fz-${m.token}`;
  const content = `---\nname: ${name}\ndescription: Use when handling ${m.token}\n---\n\n1. Check the dashboard.\n`;
  return { name: "skill_manage", input: { action: "create", name, content, scope } };
}

function allowed(m: Marker, w: Where, canRead: (channel: string, person: string) => boolean): boolean {
  if (m.ws !== w.ws) return false;
  switch (m.kind) {
    case "knowledge":
      // A listened channel's message: only to whoever can read that channel at this moment.
      return canRead(m.channel, w.person);
    case "dm":
    case "profile":
      return m.person === w.person;
    case "channelMsg":
    case "team":
      return true;
    case "channelMem":
      return !w.isDm && m.channel === w.channel;
    case "proposed":
      if (m.shared) return true;
      return m.fromDm ? m.person === w.person : !w.isDm && m.channel === w.channel;
  }
}

/** The text of a request that could carry data: system, message texts and tool results (queries removed). */
function visibleText(req: RecordedRequest, queries: readonly string[]): string {
  const parts = [systemText(req)];
  for (const m of req.body.messages) {
    if (typeof m.content === "string") {
      parts.push(m.content);
      continue;
    }
    for (const b of m.content) {
      const block = b as { type: string; text?: unknown; content?: unknown };
      if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
      if (block.type === "tool_result") {
        let text = typeof block.content === "string" ? block.content : JSON.stringify(block.content);
        // The result echoes the query; the query is the fuzzer's own probe, not leaked data.
        for (const q of queries) text = text.split(`"${q}"`).join('"<query>"');
        parts.push(text);
      }
    }
  }
  return parts.join("\n");
}

/** A text's words as a search reads them, roughly: lower case, letters and digits. */
const wordsOf = (text: string): Set<string> => new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean));

/** `database`: the one `core` runs on, where the listened channels are set up directly. */
export async function runScopeFuzz(core: Core, database: Database, fake: FakeAnthropic, opts: FuzzOptions): Promise<FuzzReport> {
  const rand = prng(opts.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const hex = () => Math.floor(rand() * 0xffffffff).toString(16).padStart(8, "0");
  const wss = Array.from({ length: opts.workspaces }, (_, i) => ({ id: `${opts.runId}-w${i}`, platform: (i % 2 === 0 ? "slack" : "discord") as Platform }));
  const markers: Marker[] = [];
  const queries: string[] = [];
  const violations: string[] = [];
  let promptsChecked = 0;
  let searches = 0;
  let knowledgeSeen = 0;
  let whyChecked = 0;
  let whyExplained = 0;
  let approvals = 0;
  let shared = 0;
  /** The proposed markers of each planting turn, with the answer a ✅ on shares them. */
  const proposals: { markers: Marker[]; ws: (typeof wss)[number]; at: PlaceOptions; platformId: string | null }[] = [];
  // The why probes draw from their own sequence: the turns stay those of the seed without them.
  const whyRand = prng(opts.seed ^ 0x5bd1e995);
  const whyPick = <T>(xs: readonly T[]): T => xs[Math.floor(whyRand() * xs.length)]!;
  /** Every answer, posted as a platform message (a recorded delivery) a why can be picked on. */
  const answers: { ws: (typeof wss)[number]; at: PlaceOptions; platformId: string }[] = [];
  // session_search's other modes and filters draw from a sequence of their own too.
  const modeRand = prng(opts.seed ^ 0x2545f491);
  const modePick = <T>(xs: readonly T[]): T => xs[Math.floor(modeRand() * xs.length)]!;
  let modeProbes = 0;
  let modeFinds = 0;
  /** Which tool_use ids were mode probes: their results are counted when the next request carries them. */
  const probeIds = new Set<string>();
  /** Each person's private skill, by name: the why phase reads it. */
  const privateSkills = new Map<string, string>();
  // Paraphrase probes (embeddings on) draw from a sequence of their own too.
  const vecRand = prng(opts.seed ^ 0x3c6ef372);
  const vecPick = <T>(xs: readonly T[]): T => xs[Math.floor(vecRand() * xs.length)]!;
  const vectors = { probes: 0, finds: 0, rows: 0, guarded: 0 };
  /** Each message marker's paraphrase: a made-up word the embeddings server reads as the marker's. */
  const paraphrases = new Map<Marker, string>();
  /** Conversations the vector query returned rows of, as conversationOf reads them. */
  const conversations = new Map<string, { ws: string; kind: string; isDm: boolean; channelId: string } | null>();
  /** Which tool_use ids were paraphrase probes, with their query. */
  const vectorIds = new Map<string, string>();
  /** A marker's message text; with embeddings on, a paraphrase of its marker for the probes. */
  function saying(m: Marker, text: string): string {
    m.said = text;
    if (opts.vectors) {
      const word = `zzmeans${Math.floor(vecRand() * 0xffffffff).toString(16).padStart(8, "0")}`;
      opts.vectors.alike([[m.token, word]]);
      paraphrases.set(m, word);
    }
    return text;
  }

  // Listened channels: Slack workspaces keep member lists (member events change them), Discord ones
  // answer who can read at search time (roles): both kinds of membership change while people talk.
  const platforms = { slack: channelPlatform("slack", ""), discord: channelPlatform("discord", "", { canRead: true }) };
  for (const p of Object.values(platforms)) core.attach(p);
  const readers = new Map<string, Set<string>>();
  const canRead = (channel: string, person: string): boolean => readers.get(channel)?.has(person) === true;
  const listened: { ws: (typeof wss)[number]; channel: string }[] = [];
  const db = database.prisma;
  for (const ws of wss) {
    const workspace = await core.history.workspaceOf(ws.platform, ws.id);
    for (let k = 0; k < (opts.listened ?? 2); k++) {
      const channel = `${ws.id}-k${k}`;
      const members = new Set(Array.from({ length: opts.people }, (_, i) => `${ws.id}-p${i}`).filter(() => rand() < 0.5));
      readers.set(channel, members);
      const p = platforms[ws.platform as "slack" | "discord"];
      if (p.readers) p.readers.set(channel, new Set(members));
      else p.members.set(channel, new Set(members));
      await db.channelListen.create({ data: { workspaceId: workspace.id, channelId: channel, status: "on", backfill: "done" } });
      listened.push({ ws, channel });
    }
    core.knowledge.listens.forgetCached(scopeOfWorkspace(workspace));
  }
  /** A person joins or leaves a listened channel, as the platform would tell it. */
  async function flipMembership(): Promise<void> {
    const { ws, channel } = pick(listened);
    const person = `${ws.id}-p${Math.floor(rand() * opts.people)}`;
    const set = readers.get(channel)!;
    const joined = !set.has(person);
    if (joined) set.add(person);
    else set.delete(person);
    const p = platforms[ws.platform as "slack" | "discord"];
    if (p.readers) p.readers.set(channel, new Set(set));
    else {
      p.members.set(channel, new Set(set));
      await core.observe({ kind: "member", platform: ws.platform, workspace: { externalId: ws.id }, channel, user: person, joined });
    }
  }

  const place = (ws: (typeof wss)[number], person: string, channel: string | null): PlaceOptions =>
    channel === null
      ? { platform: ws.platform, workspace: ws.id, user: person, channel: `D-${person}`, isDm: true, name: person }
      : { platform: ws.platform, workspace: ws.id, user: person, channel, isDm: false, thread: `${channel}-thread`, name: person };

  let current: Where | null = null;
  async function turn(opts: PlaceOptions, text: string, where: Where): Promise<void> {
    current = where;
    const before = fake.requests.length;
    const result = await core.handle(inboundFor(opts, text));
    if (result.kind !== "reply") throw new Error(`fuzz turn dropped: ${result.reason}`);
    const platformId = `${opts.channel}-a${answers.length}`;
    await core.recordDelivery(result.reply, opts.channel, [platformId]);
    answers.push({ ws: wss.find((w) => w.id === where.ws)!, at: opts, platformId });
    for (const req of fake.requests.slice(before)) {
      promptsChecked++;
      const seen = visibleText(req, queries);
      for (const m of req.body.messages) {
        if (typeof m.content === "string") continue;
        for (const b of m.content as { type: string; tool_use_id?: unknown; content?: unknown }[]) {
          const id = typeof b.tool_use_id === "string" ? b.tool_use_id : "";
          if (b.type !== "tool_result") continue;
          const content = typeof b.content === "string" ? b.content : JSON.stringify(b.content);
          const asked = vectorIds.get(id);
          if (asked !== undefined && vectorIds.delete(id)) {
            // A vector find: a message shown that the asker may see and that shares no word with the query.
            const query = wordsOf(asked);
            const near = markers.some((m) => m.said !== undefined && content.includes(m.token) && allowed(m, where, canRead) && ![...wordsOf(m.said)].some((w) => query.has(w)));
            if (near) vectors.finds++;
          }
          if (!probeIds.delete(id)) continue;
          if (/\[(msg|session) /.test(content)) modeFinds++;
        }
      }
      for (const m of markers) {
        if (m.kind === "knowledge" && seen.includes(m.token) && allowed(m, where, canRead)) knowledgeSeen++;
        if (seen.includes(m.token) && !allowed(m, where, canRead)) {
          violations.push(`${m.kind} marker of ${m.person}@${m.ws}/${m.channel} reached ${where.person}@${where.ws} ${where.isDm ? "DM" : where.channel}`);
        }
      }
      // Prompts name who taught what: never a person of another workspace (people are named `<ws>-p<n>`).
      for (const other of wss) if (other.id !== where.ws && seen.includes(`${other.id}-p`)) violations.push(`a person of ${other.id} was named to ${where.person}@${where.ws}`);
    }
  }

  // Plant: every person says private and shared things, and cairn saves memory at every scope.
  for (const ws of wss) {
    for (let p = 0; p < opts.people; p++) {
      const person = `${ws.id}-p${p}`;
      const channel = `${ws.id}-c${Math.floor(rand() * opts.channels)}`;
      const mk = (kind: MarkerKind, ch = ""): Marker => {
        const m = { token: `zq${kind.toLowerCase()}${hex()}`, kind, ws: ws.id, person, channel: ch };
        markers.push(m);
        return m;
      };
      const dmMsg = mk("dm");
      const profile = mk("profile");
      const profileLesson = mk("profile");
      const profileSkill = mk("profile");
      privateSkills.set(person, `fz-${profileSkill.token}`);
      // Asked for the team from a DM: the author's own until a teammate approves (a teacher's waits for their own confirmation).
      const dmTeam = mk("proposed");
      dmTeam.fromDm = true;
      const userOps = [
        { action: "add", target: "user", content: `private note ${profile.token}` },
        { action: "add", target: "user", kind: "lesson", content: `private lesson on ${pick(TOPICS)} ${profileLesson.token}` },
        { action: "add", target: "team", content: `dm team fact ${dmTeam.token}` },
      ];
      fake.enqueue({ toolUse: [{ name: "memory", input: { operations: userOps } }, skillCall(profileSkill, "user")] }, { text: "noted" });
      await turn(place(ws, person, null), saying(dmMsg, `my secret is ${dmMsg.token}`), { ws: ws.id, person, isDm: true, channel: `D-${person}` });
      if (p !== 0) proposals.push({ markers: [dmTeam], ws, at: place(ws, person, null), platformId: null });
      const chMsg = mk("channelMsg", channel);
      const chMem = mk("channelMem", channel);
      // A trusted teacher's team writes are the workspace's at once; anyone else's are proposed.
      const teamKind: MarkerKind = p === 0 ? "team" : "proposed";
      const team = mk(teamKind, channel);
      const chLesson = mk("channelMem", channel);
      const teamLesson = mk(teamKind, channel);
      const sharedOps = [
        { action: "add", target: "channel", content: `channel rule ${chMem.token}` },
        { action: "add", target: "team", content: `team fact ${team.token}` },
        { action: "add", target: "channel", kind: "lesson", content: `channel lesson on ${pick(TOPICS)} ${chLesson.token}` },
        { action: "add", target: "team", kind: "lesson", content: `team lesson on ${pick(TOPICS)} ${teamLesson.token}` },
      ];
      const chSkill = mk("channelMem", channel);
      // A team skill follows the same rule: the channel's, proposed, until someone else approves it.
      const teamSkill = mk(teamKind, channel);
      fake.enqueue({ toolUse: [{ name: "memory", input: { operations: sharedOps } }, skillCall(chSkill, "channel"), skillCall(teamSkill, "team")] }, { text: "saved" });
      await turn(place(ws, person, channel), saying(chMsg, `for everyone here: ${chMsg.token}`), { ws: ws.id, person, isDm: false, channel });
      // Then changed: the texts they had are kept as history (memory_history reads it), under the same scopes.
      const changes = [
        { action: "replace", target: "user", old_text: profile.token, content: `private note ${profile.token} (changed)` },
        { action: "replace", target: "channel", old_text: chMem.token, content: `channel rule ${chMem.token} (changed)` },
      ];
      profile.changed = chMem.changed = true;
      fake.enqueue({ toolUse: [{ name: "memory", input: { operations: changes } }] }, { text: "changed" });
      await turn(place(ws, person, channel), "we changed those", { ws: ws.id, person, isDm: false, channel });
      if (teamKind === "proposed") proposals.push({ markers: [team, teamLesson, teamSkill], ws, at: place(ws, person, channel), platformId: answers.at(-1)!.platformId });
    }
  }

  /**
   * Someone of the workspace approves a proposal still open: by ✅ on cairn's reply to the message
   * that asked (in a channel), or by `approve <id>`. Only someone other than its author shares it.
   */
  async function approveOne(): Promise<void> {
    const open = proposals.filter((p) => p.markers.some((m) => !m.shared));
    if (open.length === 0) return;
    const p = pick(open);
    const author = p.markers[0]!.person;
    const approver = rand() < 0.35 ? author : `${p.ws.id}-p${Math.floor(rand() * opts.people)}`;
    approvals++;
    if (p.platformId && rand() < 0.5) {
      await core.feedback({ platform: p.ws.platform, workspace: { externalId: p.ws.id }, reactor: { externalId: approver }, channel: { externalId: p.at.channel, isDm: false }, targetMessageId: p.platformId, emoji: "✅", action: "added", at: new Date() });
      await core.learning.drain();
    } else {
      const at: PlaceOptions = { ...p.at, user: approver, name: approver, ...(p.at.isDm ? { channel: `D-${approver}` } : {}) };
      for (const m of p.markers) {
        const entry = await db.memoryEntry.findFirst({ where: { text: { contains: m.token } }, select: { id: true } });
        // A skill's marker is in its name: its proposal is judged by the proposal's id.
        const skill = entry ? null : await db.skillProposal.findFirst({ where: { name: `fz-${m.token}` }, select: { id: true } });
        const id = entry?.id ?? skill?.id;
        if (id) await core.command(inboundFor(at), "approve", [id]);
      }
    }
    if (approver === author) return;
    for (const m of p.markers) {
      if (!m.shared) shared++;
      m.shared = true;
    }
  }

  // Listened channels: people say things there (kept as channel knowledge, never a turn).
  for (const { ws, channel } of listened) {
    for (let p = 0; p < opts.people; p++) {
      const person = `${ws.id}-p${p}`;
      const m: Marker = { token: `zqknowledge${hex()}`, kind: "knowledge", ws: ws.id, person, channel };
      markers.push(m);
      const message = platforms[ws.platform as "slack" | "discord"].message(channel, `${channel}-${p}`, person, saying(m, `we agreed on ${pick(TOPICS)} ${m.token}`), new Date());
      await core.observe({ kind: "message", message: { ...message, workspace: { externalId: ws.id } } });
    }
  }

  // Talk: random people, random places; the model searches for random markers and starts new sessions.
  fake.setDefault((req) => {
    const last = req.body.messages.at(-1);
    const isToolResult = Array.isArray(last?.content) && last.content.some((b) => b.type === "tool_result");
    if (isToolResult || rand() < 0.5) return { text: "ok" } satisfies Step;
    // Half the probes look for something of the asker's own workspace (the only place a search can
    // find anything): a marker the asker may or may not be allowed to see.
    const here = current ? markers.filter((m) => m.ws === current!.ws) : [];
    const q = (here.length && rand() < 0.5 ? pick(here) : pick(markers)).token;
    queries.push(q);
    searches++;
    // A quarter of the probes ask what memory said before (memory_history), mostly about a text of this
    // workspace that was changed (its old text is history now), the rest search history.
    if (rand() < 0.25) {
      const changed = here.filter((m) => m.changed);
      const topic = changed.length && rand() < 0.8 ? pick(changed).token : q;
      if (topic !== q) queries.push(topic);
      return { toolUse: [{ name: "memory_history", input: { topic } }] };
    }
    return modeRand() < 0.4 ? modeProbe(q) : { toolUse: [{ name: "session_search", input: { query: q, limit: 20 } }] };
  });
  for (let t = 0; t < opts.turns; t++) {
    const ws = pick(wss);
    const person = `${ws.id}-p${Math.floor(rand() * opts.people)}`;
    const channel = rand() < 0.4 ? null : `${ws.id}-c${Math.floor(rand() * opts.channels)}`;
    const opts2 = place(ws, person, channel);
    if (rand() < 0.15) await core.command(inboundFor(opts2), "new");
    if (listened.length && rand() < 0.2) await flipMembership();
    if (rand() < 0.12) await approveOne();
    // A quarter of the turns probe a listened channel of the asker's workspace: found only by its readers.
    const probes = markers.filter((m) => m.kind === "knowledge" && m.ws === ws.id);
    if (probes.length && rand() < 0.25) {
      const q = pick(probes).token;
      queries.push(q);
      searches++;
      fake.enqueue({ toolUse: [{ name: "session_search", input: { query: q, limit: 20 } }] }, { text: "ok" });
    }
    const about = rand() < 0.5 ? ` about ${pick(TOPICS)}` : "";
    await turn(opts2, `question ${t}${about}`, { ws: ws.id, person, isDm: channel === null, channel: channel ?? `D-${person}` });
    if (whyRand() < 0.5) {
      const a = whyPick(answers);
      await whyProbe(a, `${a.ws.id}-p${Math.floor(whyRand() * opts.people)}`);
    }
    // A paraphrase probe now and then, while memberships and approvals change (embeddings on).
    if (opts.vectors && vecRand() < 0.3) {
      const asker = `${ws.id}-p${Math.floor(vecRand() * opts.people)}`;
      const here = [...paraphrases.keys()].filter((m) => m.ws === ws.id);
      await vectorProbe(ws, asker, vecRand() < 0.4 ? null : `${ws.id}-c${Math.floor(vecRand() * opts.channels)}`, vecPick(here.length && vecRand() < 0.7 ? here : [...paraphrases.keys()]));
    }
  }
  // Paraphrase phase (embeddings on): everyone asks by meaning for their own DM from a channel, a
  // teammate's DM from their own, a listened channel's message and a channel's message from anywhere,
  // and something of another workspace.
  if (opts.vectors) {
    const said = [...paraphrases.keys()];
    for (const ws of wss) {
      for (let p = 0; p < opts.people; p++) {
        const person = `${ws.id}-p${p}`;
        const ours = said.filter((m) => m.ws === ws.id);
        const targets = [
          ours.filter((m) => m.kind === "dm" && m.person === person),
          ours.filter((m) => m.kind === "dm" && m.person !== person),
          ours.filter((m) => m.kind === "knowledge"),
          ours.filter((m) => m.kind === "channelMsg"),
          said.filter((m) => m.ws !== ws.id),
        ];
        for (const [k, pool] of targets.entries()) {
          if (pool.length === 0) continue;
          const channel = k === 1 ? null : k === 0 || vecRand() < 0.6 ? `${ws.id}-c${Math.floor(vecRand() * opts.channels)}` : null;
          await vectorProbe(ws, person, channel, vecPick(pool));
        }
      }
    }
  }
  // Modes phase: everyone reads history by session, around a message and by recent sessions, with
  // filters, from their DM or a channel (its own sequence: the turns above stay those of the seed).
  for (const ws of wss) {
    for (let p = 0; p < opts.people; p++) {
      const person = `${ws.id}-p${p}`;
      for (let k = 0; k < 4; k++) {
        const channel = modeRand() < 0.4 ? null : `${ws.id}-c${Math.floor(modeRand() * opts.channels)}`;
        const q = modePick(markers).token;
        queries.push(q);
        searches++;
        fake.enqueue({ reply: () => modeProbe(q) }, { text: "ok" });
        await turn(place(ws, person, channel), `what happened ${k}?`, { ws: ws.id, person, isDm: channel === null, channel: channel ?? `D-${person}` });
      }
    }
  }
  // Why phase: each person asks in a channel something whose search finds their own DM (the model
  // looks for its marker) and reads their private skill, with their profile and private lessons in
  // front of it; then everyone of
  // the workspace asks why about that answer, the asker included.
  for (const ws of wss) {
    for (let p = 0; p < opts.people; p++) {
      const person = `${ws.id}-p${p}`;
      const own = markers.find((m) => m.kind === "dm" && m.person === person);
      if (!own) continue;
      const channel = `${ws.id}-c${Math.floor(whyRand() * opts.channels)}`;
      queries.push(own.token);
      searches++;
      const skill = privateSkills.get(person) ?? "none";
      fake.enqueue({ toolUse: [{ name: "session_search", input: { query: own.token, limit: 20 } }, { name: "skill_view", input: { name: skill } }] }, { text: "ok" });
      await turn(place(ws, person, channel), `what did I say about ${whyPick(TOPICS)}?`, { ws: ws.id, person, isDm: false, channel });
      const answer = answers.at(-1)!;
      for (let q = 0; q < opts.people; q++) await whyProbe(answer, `${ws.id}-p${q}`, [answer.platformId]);
    }
  }
  // Short-id phase (commands/short-id.ts): everyone types the first 6-7 characters of entries'
  // ids (a cuid starts with its time: ids made within a second or so share those) or 13-18 (time and
  // the process's counter: one id), theirs or not, into `history`; whatever answers (the entry, or a list of
  // the ids that prefix could be) carries no marker the asker may not see. Its own sequence, as above.
  const idRand = prng(opts.seed ^ 0x68e31da4);
  const idMarkers = markers.filter((m) => m.kind !== "knowledge" && m.kind !== "dm");
  const shortIds = { probes: 0, found: 0, ambiguous: 0 };
  for (const ws of wss) {
    for (let p = 0; p < opts.people && idMarkers.length; p++) {
      const person = `${ws.id}-p${p}`;
      const channel = idRand() < 0.4 ? null : `${ws.id}-c${Math.floor(idRand() * opts.channels)}`;
      const where: Where = { ws: ws.id, person, isDm: channel === null, channel: channel ?? `D-${person}` };
      for (let k = 0; k < 3; k++) {
        // Half the time one of the asker's own (an id they can see), else anyone's.
        const own = idMarkers.filter((m) => m.ws === ws.id && m.person === person);
        const pool = own.length > 0 && idRand() < 0.5 ? own : idMarkers;
        const target = pool[Math.floor(idRand() * pool.length)]!;
        const entry = await db.memoryEntry.findFirst({ where: { text: { contains: target.token } }, select: { id: true } });
        if (!entry) continue;
        const reply = await core.command(inboundFor(place(ws, person, channel)), "history", [entry.id.slice(0, idRand() < 0.5 ? 6 + Math.floor(idRand() * 2) : 13 + Math.floor(idRand() * 6))]);
        shortIds.probes++;
        if (reply.text.startsWith("**History of")) shortIds.found++;
        if (reply.text.includes("is the start of more than one id")) shortIds.ambiguous++;
        for (const m of markers) {
          if (reply.text.includes(m.token) && !allowed(m, where, canRead)) violations.push(`short id: ${m.kind} marker of ${m.person}@${m.ws}/${m.channel} reached ${person}@${ws.id} ${where.isDm ? "DM" : where.channel}`);
        }
      }
    }
  }
  fake.setDefault(null);
  return { promptsChecked, searches, markers: markers.length, knowledgeSeen, whyChecked, whyExplained, approvals, shared, modeProbes, modeFinds, shortIds, vectors, violations };

  /**
   * session_search asked by a marker's paraphrase alone, once the backfill has embedded everything
   * stored so far: the words of the query are in no stored text, so only the vector path can answer.
   */
  async function vectorProbe(ws: (typeof wss)[number], person: string, channel: string | null, target: Marker): Promise<void> {
    const embedder = core.embeddings?.embedder;
    if (!embedder) throw new Error("the scope fuzzer was given `vectors` but the core has no embeddings settings");
    for (let i = 0; ; i++) {
      const step = await embedder.step();
      if (step === "idle") break;
      if (step === "failed" || i > 10_000) throw new Error(`the embeddings backfill did not drain (${step})`);
    }
    const query = paraphrases.get(target)!;
    queries.push(query);
    searches++;
    vectors.probes++;
    const id = `toolu_vec_${vectors.probes}`;
    vectorIds.set(id, query);
    fake.enqueue({ toolUse: [{ name: "session_search", input: { query, limit: 20 }, id }] }, { text: "ok" });
    await turn(place(ws, person, channel), `what did we mean ${vectors.probes}?`, { ws: ws.id, person, isDm: channel === null, channel: channel ?? `D-${person}` });
    await nearestProbe(ws, person, channel, query);
  }

  /**
   * The probe's query asked of nearestMessages directly, as the asker, with the listened channels the
   * fuzzer knows they can read now: every row must come from a conversation they may see (a DM only
   * its owner's, a listened channel only its readers', nothing of another workspace).
   */
  async function nearestProbe(ws: (typeof wss)[number], person: string, channel: string | null, query: string): Promise<void> {
    // The turn just embedded this query: the embedder's cache answers.
    const vector = await core.embeddings!.embedder.queryVector(query, 5_000);
    if (!vector) throw new Error(`no vector for the probe ${query}`);
    const scope = scopeOf(await core.history.resolve(inboundFor(place(ws, person, channel))));
    const readable = listened.filter((l) => l.ws.id === ws.id && canRead(l.channel, person)).map((l) => l.channel);
    const rows = await nearestMessages({ database, scope, exclude: "", readable: JSON.stringify(readable), filter: {} }, vector, 50);
    for (const [id, conversationId] of rows) {
      vectors.rows++;
      const c = await conversationOf(conversationId);
      if (c && c.ws === ws.id && (c.kind === "channel" || c.isDm)) vectors.guarded++;
      const sees = c !== null && c.ws === ws.id && (c.kind === "channel" ? canRead(c.channelId, person) : !c.isDm || c.channelId === `D-${person}`);
      if (!sees) violations.push(`vector-store: message ${id} of ${c ? `${c.ws}/${c.channelId}` : `conversation ${conversationId}`} reached ${person}@${ws.id} ${channel ?? "DM"}`);
    }
  }

  /** A conversation as the fuzzer's model reads it: its workspace, its kind and channel (a DM's is `D-<owner>`). */
  async function conversationOf(id: string): Promise<{ ws: string; kind: string; isDm: boolean; channelId: string } | null> {
    const known = conversations.get(id);
    if (known !== undefined) return known;
    const c = await db.conversation.findUnique({ where: { id }, select: { kind: true, isDm: true, channelId: true, workspace: { select: { externalId: true } } } });
    const out = c && { ws: c.workspace.externalId, kind: c.kind, isDm: c.isDm, channelId: c.channelId };
    conversations.set(id, out);
    return out;
  }

  /**
   * session_search in another mode, or with filters: ids of marker messages (the asker's own
   * workspace half the time, else any: others' DMs, listened channels, other workspaces), people
   * and channels of any workspace. Whatever comes back is checked like every prompt.
   */
  async function modeProbe(q: string): Promise<Step> {
    modeProbes++;
    const ws = current && modeRand() < 0.5 ? current.ws : null;
    const rows = await db.message.findMany({
      where: { text: { contains: "zq" }, role: { in: ["user", "channel"] }, ...(ws ? { conversation: { workspace: { externalId: ws } } } : {}) },
      select: { id: true, sessionId: true, conversationId: true, createdAt: true },
      orderBy: { id: "asc" },
    });
    const row = rows.length ? modePick(rows) : null;
    const w = modePick(wss);
    const filters: Record<string, string> = {};
    if (modeRand() < 0.4) {
      const author = modePick([`${w.id}-p${Math.floor(modeRand() * opts.people)}`, "me"]);
      filters.author = author;
      queries.push(author);
    }
    if (modeRand() < 0.4) {
      filters.channel = modePick([`${w.id}-c${Math.floor(modeRand() * opts.channels)}`, `${w.id}-k${Math.floor(modeRand() * (opts.listened ?? 2))}`, `D-${w.id}-p${Math.floor(modeRand() * opts.people)}`, "dm"]);
      // A channel no one of the asker's reach has is an error quoting it back, as an unknown author's is.
      queries.push(filters.channel);
    }
    if (modeRand() < 0.3) filters[modePick(["after", "before"])] = modePick(["yesterday", "today", "2020-01-01", "last week", "3 days ago"]);
    const mode = modePick(["session", "around", "recent", "filters"] as const);
    const input =
      mode === "filters" || !row
        ? { query: q, limit: 20, ...filters }
        : mode === "session"
          ? { mode, session_id: sessionKey(row.sessionId, row.conversationId, row.createdAt), limit: 50, ...filters }
          : mode === "around"
            ? { mode, message_id: row.id, window: 20, ...filters }
            : { mode, limit: 20, ...filters };
    const id = `toolu_mode_${modeProbes}`;
    probeIds.add(id);
    return { toolUse: [{ name: "session_search", input, id }] };
  }

  /**
   * Someone of the answer's workspace asks why: about that answer, where it was posted (its thread,
   * or the DM's channel id from their own DM), or about their latest answer there. Nothing in the
   * answer may carry a marker the asker may not see; the words the fuzzer's model searched for are
   * its own probes, not data, and are taken out first.
   */
  async function whyProbe(a: (typeof answers)[number], asker: string, args = whyRand() < 0.7 ? [a.platformId] : []): Promise<void> {
    const at: PlaceOptions = { ...a.at, user: asker, name: asker };
    const where: Where = { ws: a.ws.id, person: asker, isDm: at.isDm, channel: at.isDm ? `D-${asker}` : at.channel };
    const reply = await core.command(inboundFor(at), "why", args);
    whyChecked++;
    if (reply.text.includes("**Why")) whyExplained++;
    let text = reply.text;
    for (const q of queries) text = text.split(`"${q}"`).join('"<query>"');
    for (const m of markers) {
      if (text.includes(m.token) && !allowed(m, where, canRead)) violations.push(`why: ${m.kind} marker of ${m.person}@${m.ws}/${m.channel} reached ${asker}@${a.ws.id} ${where.isDm ? "DM" : where.channel}`);
    }
  }
}
