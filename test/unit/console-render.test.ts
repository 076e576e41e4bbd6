/** Markdown -> terminal text for the console: readable, no raw markup, ANSI only when asked for. */
import { describe, expect, it } from "vitest";
import { renderTerminal, stripAnsi } from "../../src/platforms/console/render.ts";

const plain = (md: string, width?: number) => renderTerminal(md, { color: false, width });
const color = (md: string, width?: number) => renderTerminal(md, { color: true, width });
const ESC = "\u001b";
const sgr = (n: number) => `${ESC}[${n}m`;

describe("renderTerminal inline, without color", () => {
  it.each([
    ["**bold**", "bold"],
    ["__bold__", "bold"],
    ["*italic*", "italic"],
    ["_italic_", "italic"],
    ["***both***", "both"],
    ["**bold with *italic* inside**", "bold with italic inside"],
    ["*italic with **bold** inside*", "italic with bold inside"],
    ["snake_case_words stay, as does __init__py_thing", "snake_case_words stay, as does __init__py_thing"],
    ["2*3*4 and 2 * 3 * 4", "2*3*4 and 2 * 3 * 4"],
    ["a `code *not italic* **nor bold**` b", "a code *not italic* **nor bold** b"],
    ["`` a `tick` inside ``", "a `tick` inside"],
    ["`[not](a link)` and `\\*`", "[not](a link) and \\*"],
    ["[the docs](https://example.com/a_b_c)", "the docs (https://example.com/a_b_c)"],
    ["[**bold label**](https://x.io)", "bold label (https://x.io)"],
    ['[titled](https://x.io "Title")', "titled (https://x.io)"],
    ["[wiki](https://en.wikipedia.org/wiki/Foo_(bar))", "wiki (https://en.wikipedia.org/wiki/Foo_(bar))"],
    ["[https://x.io](https://x.io)", "https://x.io"],
    ["![diagram](https://x.io/d.png)", "diagram (https://x.io/d.png)"],
    ["see <https://x.io/raw_*x*_>", "see https://x.io/raw_*x*_"],
    ["bare https://x.io/_a_/*b* stays", "bare https://x.io/_a_/*b* stays"],
    ["\\*not italic\\* and \\_not\\_ and \\`not code\\`", "*not italic* and _not_ and `not code`"],
    ["a \\ b and C:\\path", "a \\ b and C:\\path"],
    ["Tom &amp; Jerry &lt;3 &#42;", "Tom &amp; Jerry &lt;3 &#42;"],
    ["<b>html</b> stays", "<b>html</b> stays"],
    ["an ** unmatched and a lone _ underscore", "an ** unmatched and a lone _ underscore"],
  ])("%s", (md, expected) => {
    expect(plain(md)).toBe(expected);
  });

  it("strikes through with a combining stroke, since plain text has no other way to say it", () => {
    expect(plain("use ~~X~~ Y")).toBe("use X\u0336 Y");
    expect(plain("~~a **b**~~")).toBe("a\u0336 \u0336b\u0336");
  });
});

describe("renderTerminal inline, with color", () => {
  it("styles emphasis with SGR pairs that close what they open", () => {
    expect(color("**b** *i* ~~s~~")).toBe(`${sgr(1)}b${sgr(22)} ${sgr(3)}i${sgr(23)} ${sgr(9)}s${sgr(29)}`);
    expect(color("**bold *it* x**")).toBe(`${sgr(1)}bold ${sgr(3)}it${sgr(23)} x${sgr(22)}`);
  });

  it("colors code spans and interprets nothing inside them, backticks dropped", () => {
    expect(color("run `rm -rf **x** _y_` now")).toBe(`run ${sgr(36)}rm -rf **x** _y_${sgr(39)} now`);
  });

  it("shows the same text as the plain rendering, only styled (headings and strikes aside)", () => {
    const md = "Some **bold**, `code`, [a link](https://x.io) and\n- a *list*\n  1. nested\n> a quote\n```js\nlet x = 1;\n```";
    expect(stripAnsi(color(md))).toBe(plain(md));
  });
});

describe("renderTerminal blocks", () => {
  it("turns headings into their text: upper case for levels 1-2 without color, bold (and underlined) with", () => {
    expect(plain("# Title\n## Sub *title* ##\n### Third `x_y`\n###### Six")).toBe("TITLE\nSUB TITLE\nThird x_y\nSix");
    expect(plain("# Run `npm ci` then [see](https://x.io/Path)")).toBe("RUN npm ci THEN SEE (https://x.io/Path)");
    expect(color("# Title")).toBe(`${sgr(1)}${sgr(4)}Title${sgr(24)}${sgr(22)}`);
    expect(color("### Third")).toBe(`${sgr(1)}Third${sgr(22)}`);
    // Inner bold would switch the heading's bold off halfway: it adds nothing there.
    expect(color("## A **b** c")).toBe(`${sgr(1)}${sgr(4)}A b c${sgr(24)}${sgr(22)}`);
    expect(plain("#hashtag and #5")).toBe("#hashtag and #5");
  });

  it("keeps fenced code verbatim, indented by 4, with its language as a label", () => {
    const md = ["Before:", "```ts title=x.ts", "const a = b ** 2; // *not* _touched_ [x](y) &amp;", "", "  indented  `tick`", "```", "After."].join("\n");
    expect(plain(md)).toBe(["Before:", "  [ts]", "    const a = b ** 2; // *not* _touched_ [x](y) &amp;", "", "      indented  `tick`", "After."].join("\n"));
    expect(color("~~~\nx *y*\n~~~")).toBe(`    ${sgr(36)}x *y*${sgr(39)}`);
  });

  it("closes a fence only with the same character, at least as long", () => {
    expect(plain("````md\n```\ninner\n```\n````\nout *x*")).toBe("  [md]\n    ```\n    inner\n    ```\nout x");
    expect(plain("```\n~~~\n```")).toBe("    ~~~");
  });

  it("still renders an unclosed fence (a draft cut mid-block) as code to the end", () => {
    expect(plain("Here:\n```python\nprint('**hi**')\nx = 1")).toBe("Here:\n  [python]\n    print('**hi**')\n    x = 1");
  });

  it("keeps a fence nested in a list under its item", () => {
    expect(plain("1. Install:\n   ```sh\n   npm i\n   ```\n2. Run")).toBe("1. Install:\n     [sh]\n       npm i\n2. Run");
  });

  it("takes ```x``` on one line for a code span, not a fence", () => {
    expect(plain("```inline``` code")).toBe("inline code");
  });

  it("turns bullets into •, keeping nesting and numbers, with task boxes", () => {
    const md = ["- one", "  - nested **b**", "    * deeper", "+ plus", "- [ ] todo", "- [x] done", "1. first", "2) second", "   10. tenth"].join("\n");
    expect(plain(md)).toBe(["• one", "  • nested b", "    • deeper", "• plus", "• ☐ todo", "• ☑ done", "1. first", "2) second", "   10. tenth"].join("\n"));
    expect(plain("*not a bullet* but italic")).toBe("not a bullet but italic");
  });

  it("draws blockquotes with a bar, nested quotes and code inside them included", () => {
    expect(plain("> quoted *thing*\n>\n> > nested\n> - item\n> ```\n> **raw**")).toBe("│ quoted thing\n│\n│ │ nested\n│ • item\n│     **raw**");
    expect(color("> q")).toBe(`${sgr(2)}│${sgr(22)} q`);
  });

  it("draws horizontal rules as a line of ─, as wide as asked", () => {
    expect(plain("a\n---\nb\n* * *\n___", 10)).toBe(`a\n${"─".repeat(10)}\nb\n${"─".repeat(10)}\n${"─".repeat(10)}`);
    expect(plain("***")).toBe("─".repeat(40));
    expect(plain("---", Number.NaN)).toBe("─".repeat(40));
    expect(plain("---", 0)).toBe("───");
  });
});

describe("renderTerminal on odd and hostile input", () => {
  it("renders the empty string and blank input as nothing", () => {
    expect(plain("")).toBe("");
    expect(color("\n\n  \n")).toBe("");
  });

  it("reads CRLF and lone CR as line ends", () => {
    const lf = "# T\n- a\n```\ncode\n```\n> q";
    expect(plain(lf.replace(/\n/g, "\r\n"))).toBe(plain(lf));
    expect(plain(lf.replace(/\n/g, "\r"))).toBe(plain(lf));
    expect(color(lf.replace(/\n/g, "\r\n"))).not.toContain("\r");
  });

  it("drops control characters from the input, so a reply cannot drive the terminal", () => {
    const hostile = `red ${ESC}[31mtext${ESC}[0m, title ${ESC}]0;pwned\u0007, csi \u009b2J, bell \u0007, tab\tkept`;
    expect(plain(hostile)).toBe("red [31mtext[0m, title ]0;pwned, csi 2J, bell , tab\tkept");
    const styled = color(`**b** ${hostile} \`${ESC}[2J\``);
    expect(stripAnsi(styled)).not.toContain(ESC);
    for (const seq of ["[31m", "[0m", "[2J"]) expect(styled).not.toContain(ESC + seq);
  });

  it("ignores input that spells its internal placeholders", () => {
    expect(plain("x \uFDD00\uFDD0 \uFDD1y\uFDD2 `c`")).toBe("x 0 y c");
    expect(color("\uFDD1y\uFDD2")).toBe("y");
  });

  it("keeps a 10,000-character line whole and renders hostile lines (a backtracking pattern would hit the test timeout)", () => {
    const long = "word ".repeat(2000).trim() + " **end**";
    expect(plain(long)).toBe(`${"word ".repeat(2000)}end`);
    const hostile = ["**a ".repeat(2500), "***a ".repeat(2000), " __a".repeat(2500), "~~a ".repeat(2500), "`".repeat(10_000), "``a".repeat(3333), "![".repeat(5000), "[x](" + "a(".repeat(5000), "\\".repeat(10_000), "*_`~[](<>\\".repeat(1000), "[".repeat(10_000)];
    for (const line of hostile) expect(stripAnsi(color(line)).length).toBeLessThanOrEqual(line.length + 2);
  });

  it("pairs emphasis marks at most 1,000 characters apart (what keeps unclosed marks linear)", () => {
    expect(plain(`**${"b".repeat(1000)}**`)).toBe("b".repeat(1000));
    expect(plain(`**${"b".repeat(1001)}**`)).toBe(`**${"b".repeat(1001)}**`);
  });

  it("does not recurse without end on a line of 10,000 quote marks", () => {
    const out = plain(">".repeat(10_000));
    expect(out.startsWith("│ │ │ │ │ │ │ │ >>>")).toBe(true);
  });

  it("never writes an escape sequence without color, whatever the input", () => {
    const md = ["# H", "**b** *i* ~~s~~ `c` [l](u) <https://a.io>", "> q", "---", "- x", "```js", "y", "```", `${ESC}[1mfake`].join("\n");
    expect(plain(md)).not.toContain(ESC);
  });
});
