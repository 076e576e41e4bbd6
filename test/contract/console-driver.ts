/**
 * The contract's driver for the console: one `ConsoleAdapter` per person, each a terminal of its
 * own (lines typed into a PassThrough, output collected as text), all on the same core. The person
 * whose terminal starts last (alice) is where the core's own posts print.
 *
 * The console has no channels, threads, reactions or redeliveries: those cases are skipped. What a
 * terminal shows is read back from its output: the person's lines where they were typed, and each
 * `cairn> ` block after them one message of cairn's (status lines while it works are not messages).
 */
import { PassThrough, Writable } from "node:stream";
import type { AdapterHost, CorePort, PostTarget } from "../../src/ground/adapter.ts";
import { CONSOLE_CHANNEL, CONSOLE_WORKSPACE, ConsoleAdapter } from "../../src/platforms/console/console.ts";
import { waitUntil } from "../fakes/http.ts";
import { PEOPLE, type Driver, type Features, type Observer, type Person, type Place, type Sent, type Shown } from "./contract.ts";

const PREFIX = "cairn> ";

class Terminal {
  readonly input = new PassThrough();
  output = "";
  /** Where in the output each typed line went, and the message id the adapter gave it. */
  readonly typed: { at: number; id: string }[] = [];
  readonly adapter: ConsoleAdapter;
  running: Promise<void> = Promise.resolve();

  constructor(readonly person: Person) {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.output += chunk.toString("utf8");
        done();
      },
    });
    this.adapter = new ConsoleAdapter({ input: this.input, output: sink, user: person, prompt: false, color: false });
  }

  /** The output as messages: a typed line, then cairn's blocks printed after it. */
  shown(): Shown[] {
    const out: Shown[] = [];
    const cuts = [...this.typed, { at: this.output.length, id: "" }];
    let from = 0;
    for (const [i, cut] of cuts.entries()) {
      out.push(...cairnBlocks(this.output.slice(from, cut.at)));
      if (i < cuts.length - 1) out.push({ id: cut.id, fromCairn: false, text: "", inReplyTo: null });
      from = cut.at;
    }
    return out;
  }
}

/** `cairn> ` starts a message, and the lines after it belong to it; anything before (the banner, statuses) is not one. */
function cairnBlocks(text: string): Shown[] {
  const blocks: Shown[] = [];
  const lines = text.split("\n");
  lines.pop();
  for (const line of lines) {
    if (line.startsWith(PREFIX)) blocks.push({ id: null, fromCairn: true, text: line.slice(PREFIX.length), inReplyTo: null });
    else if (blocks.length) blocks[blocks.length - 1]!.text += `\n${line}`;
  }
  return blocks;
}

const NOT_HERE = (what: string) => new Error(`the console has no ${what}`);

export class ConsoleDriver implements Driver {
  readonly platform = "console";
  readonly features: Features = { channels: false, threads: false, reactions: false, redelivery: false, edits: false };
  readonly thumbsUp = "";
  private readonly terminals = new Map<Person, Terminal>();
  private observer!: Observer;

  userId(person: Person): string {
    return person;
  }

  async start(core: CorePort & AdapterHost, observer: Observer) {
    this.observer = observer;
    // Each run() attaches its adapter; the last one started takes the core's own posts.
    for (const person of [...PEOPLE.filter((p) => p !== "alice"), "alice" as const]) {
      const terminal = new Terminal(person);
      this.terminals.set(person, terminal);
      terminal.running = terminal.adapter.run(core);
    }
    await waitUntil("every console to greet", () => [...this.terminals.values()].every((t) => t.output.includes("talking as")));
    return this.terminal("alice").adapter;
  }

  async stop(): Promise<void> {
    for (const terminal of this.terminals.values()) terminal.input.end();
    await Promise.all([...this.terminals.values()].map((t) => t.running));
  }

  dmPlace(person: Person): Place {
    return { channel: CONSOLE_CHANNEL, thread: null, dm: person };
  }

  dmTarget(person: Person): PostTarget {
    return { kind: "dm", workspace: CONSOLE_WORKSPACE, person };
  }

  /** Types a line; its id is the one the adapter gave the message on its way to the core. */
  async dm(person: Person, text: string): Promise<Sent> {
    const terminal = this.terminal(person);
    const typed = { at: terminal.output.length, id: "" };
    terminal.typed.push(typed);
    const seen = this.observer.received.length;
    terminal.input.write(`${text}\n`);
    const { inbound } = await waitUntil(`the console line "${text}" to reach the core`, () =>
      this.observer.received.slice(seen).find((r) => r.inbound.platform === "console" && r.inbound.author.externalId === person && r.inbound.text === text),
    );
    typed.id = inbound.messageId;
    return { id: inbound.messageId, replyPlace: this.dmPlace(person) };
  }

  /** Types a command line (`/lessons`) and returns what the console printed for it. */
  async command(person: Person, line: string, until: (printed: string) => boolean): Promise<string> {
    const terminal = this.terminal(person);
    const from = terminal.output.length;
    terminal.input.write(`${line}\n`);
    return waitUntil(`the console's answer to ${line}`, () => {
      const printed = terminal.output.slice(from);
      return until(printed) && printed;
    });
  }

  timeline(place: Place): Shown[] {
    return this.terminal(place.dm ?? "alice").shown();
  }

  channel(): Promise<Place> {
    throw NOT_HERE("channels");
  }

  thread(): Promise<Place> {
    throw NOT_HERE("threads");
  }

  mention(): Promise<Sent> {
    throw NOT_HERE("channels");
  }

  say(): Promise<Sent> {
    throw NOT_HERE("channels");
  }

  deliverTwice(): Promise<Sent> {
    throw NOT_HERE("redeliveries");
  }

  react(): Promise<void> {
    throw NOT_HERE("reactions");
  }

  postTarget(): PostTarget {
    throw NOT_HERE("channels");
  }

  private terminal(person: Person): Terminal {
    const terminal = this.terminals.get(person);
    if (!terminal) throw new Error(`no console for ${person}`);
    return terminal;
  }
}
