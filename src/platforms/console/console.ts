/**
 * The local console: a chat in the terminal, for trying cairn without Slack or Discord. One DM
 * conversation per OS user; every start begins a new session (earlier ones stay searchable).
 */
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import type { Core } from "../../core/core.ts";
import { parseCommandLine } from "../../agent/commands.ts";
import type { Inbound } from "../../core/types.ts";

export interface ConsoleOptions {
  input: Readable;
  output: Writable;
  /** The person talking: the OS user name unless CAIRN_CONSOLE_USER says otherwise. */
  user: string;
  /** Show the `you>` prompt (off when input is not a terminal). */
  prompt?: boolean;
}

export const CONSOLE_WORKSPACE = "local";

export class ConsoleAdapter {
  constructor(
    private readonly core: Core,
    private readonly opts: ConsoleOptions,
  ) {}

  private inbound(text: string): Inbound {
    return {
      platform: "console",
      workspace: { externalId: CONSOLE_WORKSPACE, name: "console" },
      author: { externalId: this.opts.user, displayName: this.opts.user },
      channel: { externalId: "console", isDm: true },
      threadId: null,
      messageId: `console-${randomUUID()}`,
      text,
      sentAt: new Date(),
    };
  }

  private write(line: string): void {
    this.opts.output.write(`${line}\n`);
  }

  /** Runs until the input ends or the person types /quit. */
  async run(): Promise<void> {
    const place = await this.core.history.resolve(this.inbound(""));
    await this.core.sessions.end(place.conversation.id, "restart");
    this.write(`cairn console: talking as ${this.opts.user}. /help for commands, /quit to leave.`);
    const rl = createInterface({ input: this.opts.input, terminal: false });
    const showPrompt = () => {
      if (this.opts.prompt) this.opts.output.write("you> ");
    };
    showPrompt();
    for await (const raw of rl) {
      const line = raw.trim();
      if (line === "/quit" || line === "/exit") break;
      if (line.startsWith("/")) {
        const cmd = parseCommandLine(line.slice(1));
        if (cmd) this.write((await this.core.command(this.inbound(line), cmd.name, cmd.args)).text);
        else this.write(`Unknown command ${line}. Try /help, /me, /skills, /new, /forget or /quit.`);
      } else if (line) {
        const result = await this.core.handle(this.inbound(line));
        if (result.kind === "reply") this.write(`cairn> ${result.reply.text}`);
      }
      showPrompt();
    }
    rl.close();
  }
}
