/**
 * What a reaction means. Adapters hand the core each emoji as its Unicode character without skin
 * tone or variation selector (src/ground/emoji.ts), so this file only compares characters. The
 * settings may be written with a platform's names ("thumbsdown"), and a feedback job queued by an
 * earlier version carries the platform's own form: both are read with `read`, which the top takes
 * from the adapters (src/platforms/slack/emoji.ts), never from a table here.
 */
import { bareEmoji } from "../ground/emoji.ts";
import type { FeedbackSignal } from "../ground/types.ts";

export type Signal = FeedbackSignal;

/** An emoji (or a name of one) to its canonical character. */
export type EmojiReader = (emoji: string) => string;

const APPROVALS = new Set(["✅", "✔"]);

export class EmojiSignals {
  private readonly negative: Set<string>;
  private readonly positive: Set<string>;

  constructor(
    settings: { correctionEmoji: readonly string[]; positiveEmoji: readonly string[] },
    private readonly read: EmojiReader = bareEmoji,
  ) {
    this.negative = new Set(settings.correctionEmoji.map(read));
    this.positive = new Set(settings.positiveEmoji.map(read));
  }

  signal(emoji: string): Signal | null {
    const e = this.read(emoji);
    if (this.negative.has(e)) return "negative";
    if (this.positive.has(e)) return "positive";
    return null;
  }

  /** ✅ (or ✔) as a queued job carries it: approves a proposed rule. */
  approves(emoji: string): boolean {
    return EmojiSignals.isApproval(this.read(emoji));
  }

  /** ✅: approves a proposed rule, confirms a pending entry. `emoji` is canonical (an adapter's). */
  static isApproval(emoji: string): boolean {
    return APPROVALS.has(emoji);
  }
}
