/**
 * The local console: a chat in the terminal, for trying cairn without Slack or Discord. One DM
 * conversation per OS user; every start begins a new session (earlier ones stay searchable).
 *
 * It implements the core's adapter contract like every platform. A terminal streams natively, so
 * the console shows a turn itself (`surface`, reply.ts): tool statuses as they come, the answer line
 * by line as the model writes it, rendered from Markdown to readable text (no raw markup).
 *
 * Two ways to read: piped input (a script, a test) is read a line at a time, each answered before
 * the next is read. A terminal (`terminal`) gets readline's line editor (history, arrows, Ctrl-A/E,
 * Ctrl-L), bracketed paste (paste.ts: a multi-line paste is one message) and a screen (screen.ts)
 * where the person may type on while cairn answers: messages are answered in order, and an answer
 * printed after a newer message was sent names the question it answers.
 */
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { parseCommandLine } from "../../ground/commands.ts";
import { typedCommand } from "../../ground/typed-command.ts";
import type { AdapterHost, Capabilities, CommandTarget, CorePort, PlatformAdapter, ReplyTarget } from "../../ground/adapter.ts";
import type { Inbound } from "../../ground/types.ts";
import { renderTerminal } from "./render.ts";
import { ANSWER_PREFIX, TerminalReply } from "./reply.ts";
import { PASTE_OFF, PASTE_ON, PasteReader, type RawTerminal } from "./paste.ts";
import { Screen } from "./screen.ts";

export interface ConsoleOptions {
  input: Readable;
  output: Writable;
  /** The person talking: the OS user name unless CAIRN_CONSOLE_USER says otherwise. */
  user: string;
  /** Show the `you>` prompt in line mode (input from a terminal, output not). */
  prompt?: boolean;
  /** ANSI styles in rendered text (on for a terminal). */
  color?: boolean;
  /** Input and output are a terminal: the line editor, bracketed paste, the thinking line. */
  terminal?: boolean;
}

export const CONSOLE_WORKSPACE = "local";
export const CONSOLE_CHANNEL = "console";
const PROMPT = "you> ";
const UNKNOWN = "Try /help, /me, /skills, /learn, /lessons, /new, /forget or /quit.";
/** Who printed last: a message's number, or nobody's (the banner, the core's own posts, notices). */
const NOBODY = 0;

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
  private screen: Screen | null = null;
  /** Messages sent so far: each is numbered in order. */
  private sent = 0;
  private lastOwner = NOBODY;

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
    return this.target(this.say(NOBODY, ""));
  }

  /** A line outside the conversation (main.ts: a problem was logged), printed above the prompt. */
  notice(line: string): void {
    this.print(`${line}\n`, NOBODY);
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

  private print(text: string, owner: number, thinking?: boolean): void {
    this.lastOwner = owner;
    if (this.screen) this.screen.print(text, thinking);
    else this.opts.output.write(text);
  }

  /**
   * How the output for message `seq` is printed. Its first output ends the thinking line; output
   * printed after a newer message was sent, with something else printed since this one's last,
   * starts by naming the question, or the person would take it for the answer to their newest.
   */
  private say(seq: number, question: string): (text: string) => void {
    return (text) => {
      const late = seq !== NOBODY && seq < this.sent && this.lastOwner !== seq;
      this.print(`${late ? `${ANSWER_PREFIX}(answering "${gist(question)}")\n` : ""}${text}`, seq, seq === NOBODY ? undefined : false);
    };
  }

  private target(say: (text: string) => void): ReplyTarget {
    return {
      channelId: CONSOLE_CHANNEL,
      send: async (text) => {
        say(`${ANSWER_PREFIX}${text}\n`);
        return `console-${randomUUID()}`;
      },
      surface: () => new TerminalReply(say, (markdown) => this.render(markdown)),
    };
  }

  /**
   * Where a command's answer is printed: as it always was, without the answer prefix. Public answers
   * are recorded by the core like its other posts; private ones (most) only printed.
   */
  private commandTarget(say: (text: string) => void): CommandTarget {
    const print = async (text: string): Promise<string> => {
      say(`${text}\n`);
      return `console-${randomUUID()}`;
    };
    return { place: { channelId: CONSOLE_CHANNEL, send: print }, private: { send: async (text) => void (await print(text)) } };
  }

  /** One sent line (trimmed, not empty, not /quit): a command or a turn, answered in full. */
  private async handle(core: CorePort, line: string, seq: number): Promise<void> {
    const say = this.say(seq, line);
    if (line.startsWith("/")) {
      const cmd = parseCommandLine(line.slice(1));
      if (cmd) await core.answer(this.inbound(line), cmd, this.commandTarget(say));
      else say(`Unknown command ${line}. ${UNKNOWN}\n`);
      return;
    }
    // A command typed without its slash: one that only answers is run (a terminal is private);
    // one that changes something reaches the core, which points to it (ground/typed-command.ts).
    const typed = typedCommand(line);
    if (typed && !typed.changes) await core.answer(this.inbound(line), typed.call, this.commandTarget(say));
    else await core.receive(this.inbound(line), this.target(say));
  }

  /** Attaches to the core and chats until the input ends or the person types /quit. */
  async run(host: AdapterHost): Promise<void> {
    const core = host.attach(this);
    await this.start();
    // Every start is a new session: what was learned last time reaches this one's snapshot.
    await core.endSession(this.inbound(""), "restart");
    this.opts.output.write(`cairn console: talking as ${this.opts.user}. /help for commands, /quit to leave. Something wrong? Run npm run doctor.\n`);
    if (this.opts.terminal) await this.chatInTerminal(core);
    else await this.chatByLines(core);
    await this.stop();
  }

  /** Piped input: a line at a time, each answered before the next is read. */
  private async chatByLines(core: CorePort): Promise<void> {
    const rl = createInterface({ input: this.opts.input, terminal: false });
    const showPrompt = () => {
      if (this.opts.prompt) this.opts.output.write(PROMPT);
    };
    showPrompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === "/quit" || line === "/exit") break;
      if (line) await this.handle(core, line, ++this.sent);
      showPrompt();
    }
    rl.close();
  }

  /**
   * A terminal: readline edits the line (raw bytes pass the paste reader first), each sent message
   * joins the queue of those being answered, and reading goes on meanwhile. /quit or Ctrl-D stop
   * reading; what was sent is still answered. Ctrl-C clears a typed line, or on an empty one stops
   * cairn as a signal would.
   */
  private async chatInTerminal(core: CorePort): Promise<void> {
    const out = this.opts.output;
    const input = this.opts.input as Readable & Partial<RawTerminal>;
    const raw = typeof input.setRawMode === "function" ? (input as RawTerminal) : null;
    const reader = new PasteReader(raw, (on) => out.write(on ? PASTE_ON : PASTE_OFF));
    // A crash or process.exit (a signal) leaves the terminal without wrapped pastes again.
    const unwrap = () => void (reader.isRaw && out.write(PASTE_OFF));
    process.once("exit", unwrap);
    input.pipe(reader);
    const rl = createInterface({ input: reader, output: out, terminal: true, prompt: PROMPT, historySize: 500 });
    const width = () => (out as Writable & { columns?: number }).columns || Number.POSITIVE_INFINITY;
    const screen = new Screen(rl, (text) => out.write(text), this.opts.color ?? false, width);
    this.screen = screen;
    rl.on("SIGINT", () => {
      if (rl.line) {
        rl.write(null, { ctrl: true, name: "u" });
        rl.write(null, { ctrl: true, name: "k" });
      } else process.kill(process.pid, "SIGINT");
    });
    screen.start();
    let answered: Promise<void> = Promise.resolve();
    for await (const typed of rl) {
      const line = reader.expand(typed).trim();
      if (line === "/quit" || line === "/exit") {
        screen.lineSent(typed);
        break;
      }
      screen.submitted(typed, line !== "");
      this.lastOwner = NOBODY;
      if (!line) continue;
      const seq = ++this.sent;
      answered = answered.then(async () => {
        screen.setThinking(true);
        await this.handle(core, line, seq).catch((err: unknown) => core.log.error({ err: String(err) }, "console message failed"));
        screen.setThinking(seq < this.sent);
      });
    }
    screen.close();
    rl.close();
    input.unpipe(reader);
    process.removeListener("exit", unwrap);
    await answered;
    input.pause();
  }
}

/** A question as its answer names it: the first line, at most 40 characters. */
function gist(question: string): string {
  const first = question.split("\n", 1)[0]!.replace(/\s+/g, " ").trim();
  return first.length > 40 ? `${first.slice(0, 40).trimEnd()}…` : first;
}
