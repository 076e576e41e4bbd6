/**
 * The local console: a chat in the terminal, for trying cairn without Slack or Discord. One DM
 * conversation per OS user; every start begins a new session (earlier ones stay searchable).
 *
 * It implements the core's adapter contract like every platform. A terminal streams natively, so
 * the console shows a turn itself (`surface`): tool statuses as they come, the answer line by line
 * as the model writes it, rendered from Markdown to readable text (no raw markup).
 */
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { parseCommandLine } from "../../ground/commands.ts";
import { typedCommand } from "../../ground/typed-command.ts";
import type { AdapterHost, Capabilities, CommandTarget, PlatformAdapter, ReplySurface, ReplyTarget, Shown } from "../../ground/adapter.ts";
import type { Inbound } from "../../ground/types.ts";
import { renderTerminal } from "./render.ts";

export interface ConsoleOptions {
  input: Readable;
  output: Writable;
  /** The person talking: the OS user name unless CAIRN_CONSOLE_USER says otherwise. */
  user: string;
  /** Show the `you>` prompt (off when input is not a terminal). */
  prompt?: boolean;
  /** ANSI styles in rendered text (on for a terminal). */
  color?: boolean;
}

export const CONSOLE_WORKSPACE = "local";
export const CONSOLE_CHANNEL = "console";
const ANSWER_PREFIX = "cairn> ";

export class ConsoleAdapter implements PlatformAdapter {
  readonly platform = "console";
  readonly capabilities: Capabilities = {
    // A terminal is read by its user alone: every answer there is private.
    ephemeral: true,
    maxMessageLength: Number.POSITIVE_INFINITY,
    maxMessageLines: Number.POSITIVE_INFINITY,
    minEditIntervalMs: 0,
  };

  private running = false;

  constructor(private readonly opts: ConsoleOptions) {}

  render(markdown: string): string {
    return renderTerminal(markdown, { color: this.opts.color ?? false });
  }

  /** A terminal has nothing to connect to: `run` reads the input once attached. */
  async start(): Promise<void> {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
  }

  /** Connected while the chat reads its input. */
  connected(): boolean {
    return this.running;
  }

  /** The core's own posts (a question, a report) are printed like an answer. */
  async open(): Promise<ReplyTarget> {
    return this.target();
  }

  private inbound(text: string): Inbound {
    return {
      platform: "console",
      workspace: { externalId: CONSOLE_WORKSPACE, name: "console" },
      author: { externalId: this.opts.user, displayName: this.opts.user },
      channel: { externalId: CONSOLE_CHANNEL, isDm: true },
      threadId: null,
      messageId: `console-${randomUUID()}`,
      text,
      sentAt: new Date(),
    };
  }

  private write(text: string): void {
    this.opts.output.write(text);
  }

  private target(): ReplyTarget {
    return {
      channelId: CONSOLE_CHANNEL,
      send: async (text) => {
        this.write(`${ANSWER_PREFIX}${text}\n`);
        return `console-${randomUUID()}`;
      },
      surface: () => new TerminalReply((text) => this.write(text), (markdown) => this.render(markdown)),
    };
  }

  /**
   * Where a command's answer is printed: as it always was, without the answer prefix. Public answers
   * are recorded by the core like its other posts; private ones (most) only printed.
   */
  private commandTarget(): CommandTarget {
    const print = async (text: string): Promise<string> => {
      this.write(`${text}\n`);
      return `console-${randomUUID()}`;
    };
    return { place: { channelId: CONSOLE_CHANNEL, send: print }, private: { send: async (text) => void (await print(text)) } };
  }

  /** Attaches to the core and chats until the input ends or the person types /quit. */
  async run(host: AdapterHost): Promise<void> {
    const core = host.attach(this);
    await this.start();
    // Every start is a new session: what was learned last time reaches this one's snapshot.
    await core.endSession(this.inbound(""), "restart");
    this.write(`cairn console: talking as ${this.opts.user}. /help for commands, /quit to leave.\n`);
    const rl = createInterface({ input: this.opts.input, terminal: false });
    const showPrompt = () => {
      if (this.opts.prompt) this.write("you> ");
    };
    showPrompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === "/quit" || line === "/exit") break;
      if (line.startsWith("/")) {
        const cmd = parseCommandLine(line.slice(1));
        if (cmd) await core.answer(this.inbound(line), cmd, this.commandTarget());
        else this.write(`Unknown command ${line}. Try /help, /me, /skills, /learn, /lessons, /new, /forget or /quit.\n`);
      } else if (line) {
        // A command typed without its slash: one that only answers is run (a terminal is private);
        // one that changes something reaches the core, which points to it (ground/typed-command.ts).
        const typed = typedCommand(line);
        if (typed && !typed.changes) await core.answer(this.inbound(line), typed.call, this.commandTarget());
        else await core.receive(this.inbound(line), this.target());
      }
      showPrompt();
    }
    rl.close();
    await this.stop();
  }
}

/**
 * One answer in the terminal: statuses on their own lines while tools run, then the answer,
 * printed a line at a time as the model completes each line (rendered as the whole answer so far,
 * so a code block or list keeps its shape), and whatever is left at the end.
 */
class TerminalReply implements ReplySurface {
  private draft = "";
  /** Rendered lines of the draft already printed. */
  private printed = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly render: (markdown: string) => string,
  ) {}

  progress(status: string): void {
    if (this.printed === 0) this.write(`  … ${status}\n`);
  }

  text(delta: string): void {
    this.draft += delta;
    const complete = this.draft.slice(0, this.draft.lastIndexOf("\n") + 1);
    if (complete) this.printLines(this.render(complete).split("\n"), false);
  }

  reset(): void {
    // A preamble already printed stays: it was true when written ("let me check the runbook").
    this.draft = "";
    this.printed = 0;
  }

  async cancel(): Promise<void> {}

  async finish(markdown: string): Promise<Shown> {
    if (this.printed > 0 && !markdown.startsWith(this.draft.slice(0, this.draft.lastIndexOf("\n") + 1))) {
      // The answer is not what was streamed (it broke off, or an apology replaced it): start afresh.
      this.write("\n");
      this.printed = 0;
    }
    this.printLines(this.render(markdown).split("\n"), true);
    return { posted: [`console-${randomUUID()}`], failed: false };
  }

  private printLines(lines: readonly string[], all: boolean): void {
    // While streaming, the last rendered line may still change: it is printed once complete.
    const upTo = all ? lines.length : Math.max(this.printed, lines.length - 1);
    for (let i = this.printed; i < upTo; i++) this.write(`${i === 0 ? ANSWER_PREFIX : ""}${lines[i]}\n`);
    this.printed = upTo;
  }
}
