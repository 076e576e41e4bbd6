/**
 * The load of the cluster test and the replica rows of the throughput benchmark: conversations
 * (threads in channels, and DMs) whose posts each carry a token (`p0042`) that the fake model
 * echoes in its answer ("answer to p0042"), so every reply is matched to the post it answers.
 *
 * A thread post is sent as Slack sends a mention in a channel the app reads (message.channels):
 * an `app_mention` and a `message`, two envelopes, each over a connection of its own choosing;
 * a DM post is one `message`. Some envelopes also go over a second connection (a duplicate
 * delivery), and one nobody acknowledges is delivered again, as Slack retries.
 *
 * No vitest here: the benchmark drives the same load.
 */
import { eventCallback, mulberry32, type BotPost, type FakeSlack } from "../fakes/slack.ts";
import { waitUntil } from "../fakes/http.ts";

export const TOKEN = /\bp\d{4}\b/;
/** What the fake model answers to the post with `token`. */
export const answerTo = (token: string | null): string => (token ? `answer to ${token}` : "answer to no post");

export interface Conversation {
  index: number;
  kind: "dm" | "thread";
  channel: string;
  /** The thread's root (someone else's post, never addressed to cairn); null for a DM. */
  threadTs: string | null;
  /** Who posts in it, in turn (a DM has one person, a thread two). */
  users: string[];
}

export interface Post {
  token: string;
  /** Its place in the send order. */
  index: number;
  conversation: Conversation;
  /** Its place among its conversation's posts. */
  k: number;
  user: string;
  /** Slack's ts, given when it is sent (ts grows with the send order). */
  ts: string;
  text: string;
  /** When it was sent (ms since the epoch); null until then. */
  sentAt: number | null;
  envelopes: string[];
}

export interface Plan {
  team: string;
  conversations: Conversation[];
  /** In send order. */
  posts: Post[];
}

export interface PlanOptions {
  team: string;
  conversations: number;
  postsEach: number;
  /** The share of conversations that are DMs (the rest are threads). */
  dmShare: number;
  /** Channels the threads are spread over. */
  channels: number;
  seed: number;
  /** Put in every channel and user id, so two plans on one fake never share a place (default ""). */
  tag?: string;
  /** The number of the first post's token (default 0; tokens are four digits). */
  firstToken?: number;
}

/**
 * Conversations and their posts, in a send order that is a random merge (from the seed) of the
 * conversations' own orders: mostly interleaved, now and then two posts of one conversation in a
 * row, as a person adds "one more thing" before the answer came.
 */
export function planLoad(slack: FakeSlack, o: PlanOptions): Plan {
  const random = mulberry32(o.seed);
  const tag = o.tag ?? "";
  const dms = Math.round(o.conversations * o.dmShare);
  const conversations: Conversation[] = Array.from({ length: o.conversations }, (_, index) => {
    const id = String(index).padStart(3, "0");
    if (index < dms) {
      const user = `U${tag}DM${id}`;
      return { index, kind: "dm", channel: `D${tag}DM${id}`, threadTs: null, users: [user] };
    }
    const channel = `C${tag}LOAD${index % o.channels}`;
    // A thread of someone else's post; its replies are addressed to cairn.
    const threadTs = slack.seedMessage({ channel, user: "UROOT", text: `thread ${id}: let us talk` });
    return { index, kind: "thread", channel, threadTs, users: [`U${tag}TA${id}`, `U${tag}TB${id}`] };
  });
  const left = conversations.map(() => o.postsEach);
  const posts: Post[] = [];
  while (posts.length < o.conversations * o.postsEach) {
    const open = conversations.filter((c) => left[c.index]! > 0);
    const c = open[Math.floor(random() * open.length)]!;
    const k = o.postsEach - left[c.index]!;
    left[c.index]! -= 1;
    const token = `p${String((o.firstToken ?? 0) + posts.length).padStart(4, "0")}`;
    const user = c.users[k % c.users.length]!;
    const words = `${token} question ${k + 1} of conversation ${c.index}`;
    posts.push({ token, index: posts.length, conversation: c, k, user, ts: "", text: c.kind === "dm" ? words : `<@${slack.bot.userId}> ${words}`, sentAt: null, envelopes: [] });
  }
  return { team: o.team, conversations, posts };
}

export interface SendOptions {
  /** Chooses the connections of each envelope (socketSpread). */
  spread: (open: readonly number[], copies?: number) => number[];
  /** The share of envelopes also delivered over a second connection. */
  duplicateShare: number;
  /** Slack's redelivery of an envelope nobody acknowledged (the fake's PushOptions.redeliverAfterMs). */
  redeliverAfterMs?: number;
  seed: number;
}

/** The events of one post: what Slack sends for it. */
export function eventsOf(post: Post): Record<string, unknown>[] {
  const c = post.conversation;
  const base = { channel: c.channel, user: post.user, text: post.text, ts: post.ts, event_ts: post.ts };
  if (c.kind === "dm") return [{ type: "message", channel_type: "im", ...base }];
  const inThread = { ...base, thread_ts: c.threadTs };
  return [
    { type: "app_mention", ...inThread },
    { type: "message", channel_type: "channel", ...inThread },
  ];
}

/** A sender of posts: each post stored in the fake (what a thread's history shows) and its envelopes sent. */
export function sender(slack: FakeSlack, plan: Plan, o: SendOptions): (post: Post) => Promise<void> {
  const random = mulberry32(o.seed ^ 0x5eed);
  return async (post) => {
    const c = post.conversation;
    post.ts = slack.seedMessage({ channel: c.channel, user: post.user, text: post.text, ...(c.threadTs ? { thread_ts: c.threadTs } : {}) });
    post.sentAt = Date.now();
    for (const event of eventsOf(post)) {
      // While no connection is open (a restart), Slack holds events: so does this.
      const open = await waitUntil("an open Socket Mode connection", () => {
        const ids = slack.sockets().filter((s) => s.closedAt === null).map((s) => s.id);
        return ids.length ? ids : null;
      }, 30_000);
      const to = o.spread(open, random() < o.duplicateShare ? 2 : 1);
      const opts = o.redeliverAfterMs !== undefined ? { to, redeliverAfterMs: o.redeliverAfterMs } : { to };
      post.envelopes.push(slack.pushEnvelope("events_api", eventCallback(plan.team, event), opts));
    }
  };
}

/** Sends every post of the plan at `perSecond`, in order (open loop: it does not wait for answers). */
export async function sendAtRate(plan: Plan, send: (post: Post) => Promise<void>, perSecond: number): Promise<void> {
  const t0 = Date.now();
  for (const post of plan.posts) {
    const due = t0 + (post.index * 1000) / perSecond;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await send(post);
  }
}

/**
 * Closed loop, as people wait for an answer before they write again: each conversation sends its
 * next post once the previous one is answered. Resolves when every post is answered; rejects if
 * one is not within `timeoutMs`.
 */
export async function sendClosedLoop(slack: FakeSlack, plan: Plan, send: (post: Post) => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const waiting = new Map<string, () => void>();
  const off = slack.onBotPost((p) => {
    const token = TOKEN.exec(p.text)?.[0];
    if (token) waiting.get(token)?.();
  });
  try {
    await Promise.all(
      plan.conversations.map(async (c) => {
        for (const post of plan.posts.filter((p) => p.conversation === c)) {
          const answered = new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`${post.token} not answered within ${timeoutMs} ms`)), timeoutMs);
            waiting.set(post.token, () => (clearTimeout(timer), resolve()));
          });
          await send(post);
          await answered;
        }
      }),
    );
  } finally {
    off();
  }
}

export interface Reply {
  post: BotPost;
  token: string | null;
}

export interface Outcome {
  posts: number;
  /** Bot posts in the load's places (matched or not). */
  replies: number;
  /** Posts answered at least once. */
  answered: number;
  /** Posts answered more than once, with every reply. */
  duplicates: { token: string; conversation: number; replies: { seq: number; at: number; text: string }[] }[];
  /** Posts never answered. */
  lost: Post[];
  /** Conversations whose replies came in another order than their posts: the posts' k in reply order. */
  disordered: { conversation: number; kind: Conversation["kind"]; replyOrder: number[] }[];
  /** Posts answered after a later post of their conversation was. */
  outOfOrder: number;
  /**
   * Posts Slack delivered again (no connection acknowledged them within 3 s: the replica holding
   * them died, or had not stored them yet), left out of the order check: they reached cairn after
   * posts sent after them, as they would from Slack.
   */
  redelivered: number;
  /** Replies in another place than their post's (channel, thread). */
  misplaced: { token: string; expected: string; got: string }[];
  /** Bot posts that name no post of the load (apologies, notices). */
  unmatched: { seq: number; channel: string; thread_ts: string | undefined; text: string }[];
  /** Milliseconds from a post to its first reply, for the answered posts. */
  latencies: number[];
}

const placeOf = (channel: string, thread: string | undefined | null): string => `${channel}${thread ? `/${thread}` : ""}`;

/** Matches every bot post to the post it answers, and says what is missing, doubled or out of order. */
export function analyse(slack: FakeSlack, plan: Plan): Outcome {
  const byToken = new Map(plan.posts.map((p) => [p.token, p]));
  const channels = new Set(plan.conversations.map((c) => c.channel));
  const bot = slack.botPosts().filter((p) => !p.deleted && channels.has(p.channel));
  const repliesTo = new Map<string, BotPost[]>();
  const unmatched: Outcome["unmatched"] = [];
  const misplaced: Outcome["misplaced"] = [];
  for (const p of bot) {
    const token = TOKEN.exec(p.text)?.[0];
    const post = token ? byToken.get(token) : undefined;
    if (!token || !post || !p.text.startsWith("answer to")) {
      unmatched.push({ seq: p.seq, channel: p.channel, thread_ts: p.thread_ts, text: p.text.slice(0, 200) });
      continue;
    }
    repliesTo.set(token, [...(repliesTo.get(token) ?? []), p]);
    const expected = placeOf(post.conversation.channel, post.conversation.threadTs);
    const got = placeOf(p.channel, p.thread_ts);
    if (expected !== got) misplaced.push({ token, expected, got });
  }
  const duplicates: Outcome["duplicates"] = [];
  const lost: Post[] = [];
  const latencies: number[] = [];
  for (const post of plan.posts) {
    const replies = repliesTo.get(post.token) ?? [];
    if (replies.length === 0) lost.push(post);
    if (replies.length > 1) duplicates.push({ token: post.token, conversation: post.conversation.index, replies: replies.map((r) => ({ seq: r.seq, at: r.at, text: r.text })) });
    if (replies.length > 0 && post.sentAt !== null) latencies.push(replies[0]!.at - post.sentAt);
  }
  const disordered: Outcome["disordered"] = [];
  let outOfOrder = 0;
  const envelopesRedelivered = new Set(slack.deliveries.filter((d) => d.attempt > 0).map((d) => d.envelopeId));
  const isRedelivered = (p: Post) => p.envelopes.length > 0 && p.envelopes.every((id) => envelopesRedelivered.has(id) || !slack.acks.some((a) => a.envelope_id === id));
  for (const c of plan.conversations) {
    // Each answered post once, at its first reply, in the order the replies reached Slack.
    const order = plan.posts
      .filter((p) => p.conversation === c && repliesTo.has(p.token) && !isRedelivered(p))
      .map((p) => ({ k: p.k, seq: repliesTo.get(p.token)![0]!.seq }))
      .sort((x, y) => x.seq - y.seq)
      .map((x) => x.k);
    let highest = -1;
    let late = 0;
    for (const k of order) {
      if (k < highest) late += 1;
      highest = Math.max(highest, k);
    }
    if (late > 0) disordered.push({ conversation: c.index, kind: c.kind, replyOrder: order });
    outOfOrder += late;
  }
  return {
    posts: plan.posts.length,
    replies: bot.length,
    answered: plan.posts.length - lost.length,
    duplicates,
    lost,
    disordered,
    outOfOrder,
    redelivered: plan.posts.filter(isRedelivered).length,
    misplaced,
    unmatched,
    latencies,
  };
}

/**
 * Resolves once every post is answered, or once none of the plan's posts was sent or answered for
 * `quietMs` (then some are lost), or at `timeoutMs`. Progress, not a fixed wait: on a busy machine
 * replies trickle in late but keep coming.
 */
export async function settle(slack: FakeSlack, plan: Plan, o: { quietMs: number; timeoutMs: number }): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  const tokens = new Set(plan.posts.map((p) => p.token));
  for (;;) {
    const replies = slack.botPosts().filter((b) => tokens.has(TOKEN.exec(b.text)?.[0] ?? ""));
    const answered = new Set(replies.map((b) => TOKEN.exec(b.text)?.[0]));
    if (plan.posts.every((p) => answered.has(p.token))) return;
    const lastReply = replies.at(-1)?.at ?? 0;
    const lastSent = Math.max(0, ...plan.posts.map((p) => p.sentAt ?? 0));
    if (Date.now() - Math.max(lastReply, lastSent) > o.quietMs || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
