/**
 * The console as a person at a terminal sees it: cairn's real entry point on a real pseudo-terminal
 * (python3's pty module relays bytes between this test's pipes and the pty), against the fake
 * Anthropic server and a fresh SQLite file. One cairn process walks through the line editor, the
 * thinking line, a late answer, and bracketed pastes. Every step waits for what the screen shows or
 * what the fake received; nothing sleeps.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from "vitest";
import { MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import { lastUserText, startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { root, runCairn } from "../support/run-cairn.ts";

// Runs argv[1:] on a new pty (200 columns), copies our stdin to it and its output to our stdout,
// and exits with the child's code once the pty is closed.
const RELAY = String.raw`
import fcntl, os, select, struct, subprocess, sys, termios
master, slave = os.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
child = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
os.close(slave)
os.set_blocking(master, False)
pending, reading = b"", True
while True:
    rs, ws, _ = select.select([master] + ([0] if reading else []), [master] if pending else [], [])
    if master in rs:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            break
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    if 0 in rs:
        data = os.read(0, 65536)
        if data:
            pending += data
        else:
            reading = False
    if master in ws and pending:
        try:
            pending = pending[os.write(master, pending):]
        except BlockingIOError:
            pass
sys.exit(child.wait())
`;

const PASTE_START = "\u001b[200~";
const PASTE_END = "\u001b[201~";
const LEFT = "\u001b[D";
const WAIT_MS = 90_000;

const COLUMNS = 200;
// eslint-disable-next-line no-control-regex
const OUTPUT = /\u001b\[([?0-9;]*)([A-Za-z~])|\u001b.|[\s\S]/gu;

/**
 * What the terminal shows (scrollback included), replayed from its output: text, CR, LF, wrapping,
 * and the cursor moves and erases readline and the console write (CSI A B C D G K J); styles and
 * modes are ignored. Trailing spaces are trimmed from each line.
 */
function visible(raw: string): string {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const at = (r: number): string[] => (lines[r] ??= []);
  for (const [ch, args, op] of raw.matchAll(OUTPUT)) {
    const n = Number(args?.replace("?", "").split(";")[0] || 0);
    if (op === undefined) {
      if (ch === "\r") col = 0;
      else if (ch === "\n") at(++row);
      else if (!ch.startsWith("\u001b")) {
        if (col >= COLUMNS) [row, col] = [row + 1, 0];
        const line = at(row);
        while (line.length < col) line.push(" ");
        line[col++] = ch;
      }
      continue;
    }
    if (args?.startsWith("?")) continue;
    if (op === "A") row = Math.max(0, row - (n || 1));
    else if (op === "B") row += n || 1;
    else if (op === "C") col += n || 1;
    else if (op === "D") col = Math.max(0, col - (n || 1));
    else if (op === "G") col = Math.max(0, (n || 1) - 1);
    else if (op === "K") lines[row] = n === 2 ? [] : n === 1 ? at(row).map((c, i) => (i <= col ? " " : c)) : at(row).slice(0, col);
    else if (op === "J" && n === 0) {
      lines[row] = at(row).slice(0, col);
      lines.length = row + 1;
    }
    at(row);
  }
  return lines.map((l) => Array.from(l, (c) => c ?? " ").join("").trimEnd()).join("\n");
}

class Terminal {
  raw = "";
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiters = new Set<() => void>();

  constructor(env: Record<string, string>) {
    this.child = spawn("python3", ["-c", RELAY, process.execPath, "--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", TERM: "xterm-256color", ...env },
    });
    this.child.stdout.on("data", (d: Buffer) => {
      this.raw += d.toString("utf8");
      for (const w of this.waiters) w();
    });
    this.child.stderr.on("data", (d: Buffer) => (this.raw += `[relay stderr] ${d.toString("utf8")}`));
    this.exited = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  type(bytes: string): void {
    this.child.stdin.write(bytes);
  }

  /** Waits until the output (from `from` on) satisfies `ok`; fails naming `what` after a generous time. */
  until(what: string, ok: (screen: string, raw: string) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok(visible(this.raw), this.raw)) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`the terminal never showed ${what}; it shows:\n${visible(this.raw).slice(-3000)}`));
      }, WAIT_MS);
      this.waiters.add(check);
      check();
    });
  }

  kill(): void {
    this.child.kill("SIGKILL");
  }
}

/** A reply the test lets go when it wants: the model "thinking" as long as it takes. */
function held(step: Step): { step: Step; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { step: { reply: async () => (await gate, step) }, release };
}

const texts = (req: RecordedRequest): string => JSON.stringify(req.body.messages);

describe("the console in a terminal", () => {
  let fake: FakeAnthropic;
  let dir: string;
  let term: Terminal;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "cairn-tty-"));
    term = new Terminal({
      ANTHROPIC_API_KEY: fake.apiKey,
      ANTHROPIC_BASE_URL: fake.url,
      DATABASE_URL: `file:${join(dir, "cairn.db")}`,
      CAIRN_CONSOLE_USER: "dana",
      LOG_LEVEL: "info",
      CAIRN_MODEL_MAX_ATTEMPTS: "1",
    });
    await term.until("the prompt", (s) => s.includes("talking as dana") && s.endsWith("you>"));
  }, WAIT_MS + 10_000);
  afterAll(async () => {
    term.kill();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("asks the terminal to wrap pastes", () => {
    expect(term.raw).toContain("\u001b[?2004h");
  });

  it("edits the line with arrow keys, shows thinking… until the answer, and names the question of an answer that comes after a newer message", async () => {
    const first = held({ text: "Use the deploy pipeline." });
    fake.enqueue(first.step, { text: "Team payments owns it." });
    // Never left holding the console's queue, whatever fails below.
    onTestFinished(() => first.release());
    // One key at a time, as typed: readline takes a chunk of several characters for a paste.
    term.type("helo");
    await term.until("the typed word", (s) => s.endsWith("you> helo"));
    const mark = term.raw.length;
    term.type(LEFT);
    await term.until("the cursor moved left", (_s, raw) => raw.length > mark);
    term.type("l");
    await term.until("the corrected word", (s) => s.endsWith("hello"));
    term.type("\r");
    const [asked] = await fake.waitForRequests(1, WAIT_MS);
    expect(lastUserText(asked!)).toContain("hello");
    expect(lastUserText(asked!)).not.toContain("helo\u001b");
    expect(texts(asked!)).not.toMatch(/\\u001b|helol|\[D/);
    // The model has not answered: the thinking line is up.
    await term.until("the thinking line", (s) => s.includes("thinking…"));

    // The person asks again before the first answer came.
    term.type("who owns it?\r");
    await term.until("the second question sent", (s) => /you> who owns it\?\n/.test(s));
    first.release();
    // The prompt is drawn again after the answer is printed: wait for it too, not just the words.
    await term.until("both answers and the prompt below them", (s) => /cairn> Team payments owns it\.\nyou>\s*$/.test(s));
    // The person's lines stay where they were sent; the first answer names its question, the
    // second (to the newest message) needs no name; no thinking line is left on the screen.
    const screen = visible(term.raw);
    expect(screen.slice(screen.indexOf("you> hello"))).toBe(
      ["you> hello", "you> who owns it?", 'cairn> (answering "hello")', "cairn> Use the deploy pipeline.", "cairn> Team payments owns it.", "you>"].join("\n"),
    );
    // Two turns, two model calls: the second question reached the model whole after the first answer.
    expect(fake.requests).toHaveLength(2);
    expect(lastUserText(fake.requests[1]!)).toContain("who owns it?");
  }, WAIT_MS * 3);

  it("takes a 4-line paste after /learn as one /learn holding all four lines, with no turn for the other lines", async () => {
    const before = fake.requests.length;
    const runbook = ["Deploy runbook:", "1. Run make release in payments-api.", "2. Wait for the canary to go green.", "3. Promote with deployctl promote payments."];
    fake.enqueue(
      {
        reply: (req) => {
          const material = /<material>\n([\s\S]*)\n<\/material>/.exec(lastUserText(req))?.[1] ?? "(no material)";
          const content = `---\nname: deploy-runbook\ndescription: How to deploy the payments service\n---\n${material}\n`;
          return { toolUse: [{ name: "skill_manage", input: { action: "create", name: "deploy-runbook", content } }] };
        },
      },
      { text: "saved" },
    );
    term.type(`/learn ${PASTE_START}${runbook.join("\r")}${PASTE_END}`);
    await term.until("the paste's placeholder", (s) => s.includes("you> /learn [paste #1: 4 lines]"));
    term.type("\r");
    await term.until("the skill learned", (s) => s.includes("deploy-runbook: How to deploy the payments service"));
    // One learn run (its tool call and its last word): no turn for lines 2-4.
    expect(fake.requests.length - before).toBe(2);
    const material = lastUserText(fake.requests[before]!);
    expect(material).toContain(runbook.join("\n"));
    const db = new BetterSqlite3(join(dir, "cairn.db"), { readonly: true });
    try {
      const skills = db.prepare(`SELECT content FROM "Skill" WHERE name = 'deploy-runbook'`).all() as { content: string }[];
      expect(skills).toHaveLength(1);
      for (const line of runbook) expect(skills[0]!.content).toContain(line);
    } finally {
      db.close();
    }
  }, WAIT_MS * 2);

  it("hands a 10,000-character paste to the model whole, as one message", async () => {
    const before = fake.requests.length;
    const lines = Array.from({ length: 125 }, (_, i) => `log ${String(i).padStart(3, "0")}: ${"abcdefghij".repeat(8)}`);
    const pasted = lines.join("\n");
    expect(pasted.length).toBeGreaterThanOrEqual(10_000);
    fake.enqueue({ text: "That log shows nothing wrong." });
    term.type(`what is wrong here? ${PASTE_START}${lines.join("\r")}${PASTE_END}`);
    await term.until("the long paste's placeholder", (s) => s.includes("[paste #2: 125 lines]"));
    term.type("\r");
    await term.until("its answer", (s) => s.includes("cairn> That log shows nothing wrong."));
    expect(fake.requests.length - before).toBe(1);
    const asked = lastUserText(fake.requests[before]!);
    expect(asked).toContain(`what is wrong here? ${pasted}`);
    for (const req of fake.requests) expect(texts(req)).not.toMatch(/\\u001b|\[20[01]~/);
  }, WAIT_MS * 2);

  it("clears a typed line with Ctrl-C and goes on chatting", async () => {
    term.type("never mind");
    await term.until("the typed line", (s) => s.endsWith("you> never mind"));
    term.type("\u0003");
    await term.until("the cleared line", (s) => s.endsWith("you>") && !s.endsWith("never mind"));
    fake.enqueue({ text: "Still here." });
    term.type("still there?\r");
    await term.until("the answer", (s) => s.includes("cairn> Still here."));
    expect(lastUserText(fake.lastRequest()!)).not.toContain("never mind");
  }, WAIT_MS * 2);

  it("tells of a logged problem in one line naming the log file, and shows none of the log's JSON", async () => {
    fake.enqueue({ error: 500 });
    term.type("are you there?\r");
    await term.until("the apology", (s) => s.includes(`cairn> ${MODEL_UNAVAILABLE_REPLY}`));
    await term.until("the notice", (s) => s.includes(`(cairn: something went wrong — details in ${join(dir, "cairn.log")})`));
    expect(visible(term.raw)).not.toMatch(/"level"|"msg"/);
    await vi.waitFor(() => expect(readFileSync(join(dir, "cairn.log"), "utf8")).toContain('"msg":"model unavailable"'), { timeout: WAIT_MS });
  }, WAIT_MS * 2);

  it("leaves with /quit, turning bracketed paste off again", async () => {
    term.type("/quit\r");
    expect(await term.exited).toBe(0);
    expect(term.raw.lastIndexOf("\u001b[?2004l")).toBeGreaterThan(term.raw.lastIndexOf("\u001b[?2004h"));
  }, WAIT_MS);
});

describe("the console with piped input", () => {
  it("stays line by line: no line editor, no bracketed paste, no thinking line, each line its own message", async () => {
    const fake = await startFakeAnthropic();
    const dir = mkdtempSync(join(tmpdir(), "cairn-piped-"));
    try {
      fake.enqueue({ text: "One." }, { text: "Two." });
      const env = { ANTHROPIC_API_KEY: fake.apiKey, ANTHROPIC_BASE_URL: fake.url, DATABASE_URL: `file:${join(dir, "cairn.db")}`, CAIRN_CONSOLE_USER: "dana", LOG_LEVEL: "silent" };
      const run = await runCairn(env, ["first line", "second line"], (out, sent) => (out.match(/^cairn> /gm)?.length ?? 0) >= sent);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe("cairn console: talking as dana. /help for commands, /quit to leave. Something wrong? Run npm run doctor.\ncairn> One.\ncairn> Two.\n");
      expect(fake.requests.map((r) => lastUserText(r))).toEqual([expect.stringContaining("first line"), expect.stringContaining("second line")]);
    } finally {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, WAIT_MS);
});
