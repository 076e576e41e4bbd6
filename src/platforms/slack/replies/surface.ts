/**
 * How a Slack answer to a person is shown: the core's post-and-edit draft (DraftReply, unchanged),
 * plus the feedback buttons on the last part of the final answer. Only `finish` knows which text is
 * the answer: status lines and drafts go through the same posts and edits, and must not carry
 * buttons. The core's own posts (questions, reports) never come here, so they get none either.
 */
import type { FinishKind, ReplySurface, Shown } from "../../../ground/adapter.ts";
import { DraftReply } from "../../../delivery/draft.ts";
import type { DraftOptions } from "../../../ground/adapter.ts";
import { errText } from "../../../ground/log.ts";
import type { SlackBlock } from "../client.ts";
import { feedbackBlocks } from "../feedback/buttons.ts";
import type { SlackPlace } from "./target.ts";

export class AnswerSurface implements ReplySurface {
  private readonly draft: DraftReply;
  /** While the final answer is shown: the text of its last part, and that part's blocks. */
  private answer: { text: string; blocks: SlackBlock[] } | null = null;
  /** Messages whose current content carries the buttons. */
  private readonly withButtons = new Set<string>();

  constructor(
    private readonly place: SlackPlace,
    private readonly opts: DraftOptions,
  ) {
    this.draft = new DraftReply(
      {
        channelId: place.channelId,
        send: async (text) => {
          const blocks = this.blocksFor(text);
          const ts = await place.send(text, blocks);
          this.mark(ts, blocks);
          return ts;
        },
        edit: async (ts, text) => {
          // chat.update keeps a message's blocks unless given new ones: an empty list takes them off.
          const blocks = this.blocksFor(text) ?? (this.withButtons.has(ts) ? [] : undefined);
          await place.edit(ts, text, blocks);
          this.mark(ts, blocks);
        },
        remove: (ts) => place.remove(ts),
      },
      opts,
    );
  }

  progress(status: string): void {
    this.draft.progress(status);
  }

  text(delta: string): void {
    this.draft.text(delta);
  }

  reset(): void {
    this.draft.reset();
  }

  cancel(): Promise<void> {
    return this.draft.cancel();
  }

  async finish(markdown: string, kind: FinishKind = "answer"): Promise<Shown> {
    // The same parts DraftReply shows: the buttons go on the last one of an answer (not on an apology, refusal or limit).
    const parts = kind === "answer" ? this.opts.chunk(this.opts.render(markdown)) : [];
    const last = parts.at(-1);
    this.answer = last === undefined ? null : { text: last, blocks: feedbackBlocks(last) };
    try {
      const shown = await this.draft.finish(markdown);
      const id = shown.failed ? undefined : shown.posted[parts.length - 1];
      // A draft that already shows the last part's exact text is left alone by DraftReply, so it has
      // no buttons yet: one more edit adds them.
      if (this.answer && id !== undefined && !this.withButtons.has(id)) {
        await this.place.edit(id, this.answer.text, this.answer.blocks).catch((err: unknown) => {
          this.opts.log.warn({ channel: this.place.channelId, id, err: errText(err) }, "could not add the feedback buttons");
        });
      }
      return shown;
    } finally {
      this.answer = null;
    }
  }

  private blocksFor(text: string): SlackBlock[] | undefined {
    return this.answer?.text === text ? this.answer.blocks : undefined;
  }

  private mark(ts: string, blocks: SlackBlock[] | undefined): void {
    if (blocks?.length) this.withButtons.add(ts);
    else this.withButtons.delete(ts);
  }
}
