/** Markdown -> Slack mrkdwn: the constructs the model writes, and what Slack needs escaped. */
import { describe, expect, it } from "vitest";
import { convertInline, escapeKeepingSequences, toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";

describe("toMrkdwn inline", () => {
  it.each([
    ["**bold**", "*bold*"],
    ["__bold__", "*bold*"],
    ["*italic*", "_italic_"],
    ["_italic_", "_italic_"],
    ["***both***", "*_both_*"],
    ["**bold with *italic* inside**", "*bold with _italic_ inside*"],
    ["~~gone~~", "~gone~"],
    ["2 * 3 * 4", "2 * 3 * 4"],
    ["snake_case_name stays", "snake_case_name stays"],
    ["a `code *not bold*` b", "a `code *not bold*` b"],
    ["`a < b && c`", "`a &lt; b &amp;&amp; c`"],
    ["[the docs](https://example.com/a?b=1&c=2)", "<https://example.com/a?b=1&amp;c=2|the docs>"],
    ["[**bold label**](https://x.io)", "<https://x.io|bold label>"],
    ["[https://x.io](https://x.io)", "<https://x.io>"],
    ["![diagram](https://x.io/d.png)", "<https://x.io/d.png|diagram>"],
    ["<https://x.io/raw>", "<https://x.io/raw>"],
    ["[a|b](https://x.io/?q=a|b)", "<https://x.io/?q=a%7Cb|a/b>"],
    ["5 > 3 & 2 < 4", "5 &gt; 3 &amp; 2 &lt; 4"],
    ["<script>", "&lt;script&gt;"],
    ["\\*not italic\\*", "*not italic*"],
  ])("%s", (md, expected) => {
    expect(convertInline(md)).toBe(expected);
  });

  it("keeps Slack's mention, channel, date and link sequences verbatim, and shows mass mentions as text", () => {
    const text = "ask <@U123ABC> or <@W42|dana> in <#C1> / <#C2|general>, <!date^1700000000^{date}|Nov 14> <https://a.io|A> & co";
    expect(convertInline(text)).toBe("ask <@U123ABC> or <@W42|dana> in <#C1> / <#C2|general>, <!date^1700000000^{date}|Nov 14> <https://a.io|A> &amp; co");
    // Anyone could ask cairn to repeat these: they must never ping a channel, a workspace or a group.
    const mass = "<!here> <!channel> <!everyone> <!subteam^S12|@ops> <!here|here>";
    expect(convertInline(mass)).toBe("&lt;!here&gt; &lt;!channel&gt; &lt;!everyone&gt; &lt;!subteam^S12|@ops&gt; &lt;!here|here&gt;");
    expect(toMrkdwn(`**Heads up** ${mass}`)).not.toMatch(/<!(?:here|channel|everyone|subteam)/);
    // Unless an admin lets them through (CAIRN_ALLOW_MASS_MENTIONS), everywhere a line can hold them.
    expect(convertInline(mass, { massMentions: true })).toBe(mass);
    expect(toMrkdwn(`# Heads up <!channel>\n- ${mass}\n> <!here>`, { massMentions: true })).toBe(`*Heads up <!channel>*\n• ${mass}\n> <!here>`);
    expect(escapeKeepingSequences("<@U1> says 1 < 2 & <b>")).toBe("<@U1> says 1 &lt; 2 &amp; &lt;b&gt;");
  });

  it("keeps no special sequence but dates, in any spelling or disguise, unless mass mentions are allowed", () => {
    const disguised = [
      "<!group>",
      "<!HERE>",
      "<!Channel|channel>",
      "<!usergroup^S1>",
      "[everyone, look](<!everyone>)",
      "[x](!here)",
      "![x](!channel)",
      "[team](!subteam^S12)",
      "**<!here>**",
      "> <!channel> now",
      "- item <!everyone>",
      "| a | <!here> |\n|---|---|\n| 1 | 2 |",
    ];
    for (const md of disguised) {
      const out = toMrkdwn(md);
      // Slack reads a special mention only inside `<!...>`: every `<` left unescaped starts an allowed sequence.
      expect(out.match(/<(?!@|#|!date\^|https?:|mailto:)/g), `${md} -> ${out}`).toBeNull();
      // Allowed, a sequence written as one stays one outside code (a link target never becomes one).
      if (md.includes("<!") && !md.includes("|---")) expect(toMrkdwn(md, { massMentions: true }), md).toMatch(/<!/);
    }
    // A Markdown link to something that is not a web or mail address is shown as text, not as a Slack sequence.
    expect(convertInline("[the plan](!here)")).toBe("the plan (!here)");
    expect(convertInline("[run this](javascript:void(0))")).toBe("run this (javascript:void(0))");
    expect(convertInline("[write](mailto:ops@example.com)")).toBe("<mailto:ops@example.com|write>");
  });
});

describe("toMrkdwn blocks", () => {
  it("turns headings into bold lines, lists into bullets, rules and quotes into Slack's forms", () => {
    const md = ["# Title", "## **Sub** title ##", "- one", "  - nested", "    - deeper", "* star", "+ plus", "- [ ] todo", "- [x] done", "1. first", "2) second", "> quoted *thing* & more", "---", "plain"].join("\n");
    expect(toMrkdwn(md)).toBe(
      ["*Title*", "*Sub title*", "• one", "    ◦ nested", "        ▪ deeper", "• star", "• plus", "• ☐ todo", "• ☑ done", "1. first", "2. second", "> quoted _thing_ &amp; more", "──────────", "plain"].join("\n"),
    );
  });

  it("keeps code fences (language dropped), escapes inside them and converts nothing there", () => {
    const md = "Run:\n```ts\nconst x = a < b && **c**;\n```\nthen `done`.";
    expect(toMrkdwn(md)).toBe("Run:\n```\nconst x = a &lt; b &amp;&amp; **c**;\n```\nthen `done`.");
  });

  it("closes an unclosed fence and supports ~~~ fences", () => {
    expect(toMrkdwn("~~~\nx > y\n~~~")).toBe("```\nx &gt; y\n```");
    expect(toMrkdwn("```\nleft open")).toBe("```\nleft open\n```");
  });

  it("renders a table as aligned columns in a code block", () => {
    const md = "| Name | Value |\n|------|------:|\n| **a** | 1 & 2 |\n| bb | [l](http://u) |\n\nafter";
    expect(toMrkdwn(md)).toBe(["```", "Name | Value", "-----+-------------", "a    | 1 &amp; 2", "bb   | l (http://u)", "```", "", "after"].join("\n"));
  });

  it("collapses runs of blank lines and trims", () => {
    expect(toMrkdwn("\n\na\n\n\n\nb\n\n")).toBe("a\n\nb");
  });
});
