/**
 * Realistic text for the knowledge benchmark: kept channel messages whose text is LoCoMo
 * conversation text (the dev set, read by bench/lib/locomo.ts; never copied into the repository),
 * and queries drawn from its questions. The 60-word rows are the pessimistic case for search
 * (three words match a large share of everything); these show what people's own words cost.
 */
import type { ChannelPlatform } from "../../test/support/channel-platform.ts";
import type { LoCoMo } from "./locomo.ts";

/**
 * `count` messages of `channel`: the turns of the conversations one after another (channel `index`
 * starts at conversation `index` mod their number, so channels do not all open alike), cycled until
 * the channel holds `count`. Text and speakers are the data's own; times are spread over the last
 * 80 days, in order, as the pessimistic rows spread theirs.
 */
export function fillWithConversations(p: ChannelPlatform, channel: string, index: number, count: number, data: LoCoMo): void {
  const cs = data.conversations;
  const turns = cs.flatMap((_, k) => cs[(index + k) % cs.length]!.turns);
  const end = Date.now();
  const span = 80 * 24 * 60 * 60_000;
  p.history.set(
    channel,
    Array.from({ length: count }, (_, i) => {
      const t = turns[i % turns.length]!;
      return p.message(channel, `${channel}-${i}`, t.speaker, t.text, new Date(end - span + Math.floor((i * span) / count)));
    }),
  );
}

/** `n` questions of categories 1-4 (all the reader keeps), picked without repeats by `r`. */
export function conversationQueries(data: LoCoMo, n: number, r: () => number): string[] {
  const all = data.conversations.flatMap((c) => c.questions.map((q) => q.question));
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, n);
}
