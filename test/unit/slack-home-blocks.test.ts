/**
 * The Home tab's Block Kit on its own: a view (views/model.ts) drawn as blocks, its modals, and the
 * state it keeps in private_metadata. Every rendered view is also checked by the fake Slack's own
 * validator (the checks views.publish and views.open make there), so a limit broken here would be
 * refused there too.
 */
import { describe, expect, it } from "vitest";
import type { TeamView, ViewButton, ViewGroup, ViewItem, ViewSection } from "../../src/ground/view-model.ts";
import { actionKind, HOME_ACTION_ID, homeView, MORE_LABEL, NOT_ENABLED, parsePageValue, PREVIOUS_LABEL } from "../../src/platforms/slack/home/blocks.ts";
import { answerModal, HOME_CALLBACK_ID, HOME_CALLBACKS, INPUT_ACTION_ID, INPUT_BLOCK_ID, inputModal, nextModal } from "../../src/platforms/slack/home/modals.ts";
import { decodeModal, decodeState, encodeState, initialState, PRIVATE_METADATA_LIMIT, resize } from "../../src/platforms/slack/home/state.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { viewButtons, viewProblem, type FakeViewBody } from "../fakes/slack.ts";

const del = (id: string): ViewButton => ({ label: "Delete", command: "forget", args: [id], style: "danger", confirm: { title: "Delete this entry?", text: "the text", yes: "Delete", no: "Cancel" } });
const judge = (id: string): ViewButton[] => [
  { label: "Approve", command: "approve", args: [id], style: "primary" },
  { label: "Reject", command: "reject", args: [id], style: "danger", confirm: { title: "Reject this proposal?", text: "x", yes: "Reject", no: "Cancel" } },
];
const item = (id: string, markdown: string, buttons: ViewButton[] = []): ViewItem => ({ id, markdown, buttons });
const group = (id: string, items: ViewItem[], extra: Partial<ViewGroup> = {}): ViewGroup => ({ id, title: id, items, total: items.length, page: 0, pages: 1, empty: `No ${id}.`, ...extra });
const forgetMe: ViewButton = { label: "Forget me", command: "forget", args: ["me"], style: "danger", next: { label: "Erase everything", command: "forget", args: ["me", "confirm"], style: "danger" } };
const persona: ViewButton = { label: "Edit persona", command: "persona", args: ["set"], input: { title: "Team persona", label: "How cairn speaks here", initial: "Be brief.", maxLength: 1500, multiline: true } };

function sample(): TeamView {
  const you: ViewSection = {
    id: "you",
    title: "You",
    lines: ["Your profile **2 of 1375** chars."],
    buttons: [forgetMe],
    groups: [group("profile", [item("e1", "Prefers **bullets** & tables", [del("e1")])]), group("private-lessons", [])],
  };
  const team: ViewSection = {
    id: "team",
    title: "Team",
    lines: ["**How cairn works here**: built-in."],
    buttons: [persona],
    groups: [group("proposals", [item("p1", "ALWAYS run the dry run  _(in <#C1>)_", judge("p1"))], { total: 12, pages: 3, page: 1 })],
  };
  const week: ViewSection = { id: "week", title: "This week", lines: ["Replies: **4**"], buttons: [], groups: [] };
  return { pane: "home", admin: true, sections: [you, team, week] };
}

const blockTypes = (v: FakeViewBody) => v.blocks.map((b) => b.type);
/** The rendered view as the fake stores it (what Slack would hold), checked by the fake's validator. */
function valid(view: object, kind: "home" | "modal" = "home"): FakeViewBody {
  const v = JSON.parse(JSON.stringify(view)) as FakeViewBody;
  expect(viewProblem(v, kind)).toBeNull();
  return v;
}

describe("homeView", () => {
  it("draws each section as a header, its lines, its buttons, and each group as a title and its items", () => {
    const r = homeView(sample(), 5);
    const v = valid(r.view);
    expect(r.fits).toBe(true);
    expect(blockTypes(v)).toEqual([
      "header", "section", "actions", // You, its line, Forget me
      "section", "section", // profile title, its one item (Delete as accessory)
      "section", // private lessons: title with its empty text
      "divider",
      "header", "section", "actions", // Team, the persona line, Edit persona
      "section", "section", "actions", "actions", // proposals title, the item, Approve/Reject, Previous/Show more
      "divider",
      "header", "section", // This week
    ]);
    expect(v.blocks[0]!.text).toEqual({ type: "plain_text", text: "You", emoji: true });
    expect(v.blocks[1]!.text).toEqual({ type: "mrkdwn", text: toMrkdwn("Your profile **2 of 1375** chars.") });
    expect(v.blocks[4]!.text!.text).toBe("Prefers *bullets* &amp; tables");
    expect(v.blocks[5]!.text!.text).toBe("*private-lessons*\nNo private-lessons.");
    expect(v.blocks[10]!.text!.text).toBe("*proposals*  (page 2 of 3, 12 in all)");
    expect(v.blocks[11]!.text!.text).toBe("ALWAYS run the dry run  _(in <#C1>)_");
  });

  it("puts one button as the accessory and two in an actions block, with command lines, styles and Slack's confirmation dialogs", () => {
    const v = valid(homeView(sample(), 5).view);
    const accessory = v.blocks[4]!.accessory!;
    expect(accessory).toMatchObject({ type: "button", text: { type: "plain_text", text: "Delete" }, value: "forget e1", style: "danger" });
    expect(accessory.confirm).toEqual({
      title: { type: "plain_text", text: "Delete this entry?", emoji: true },
      text: { type: "plain_text", text: "the text", emoji: true },
      confirm: { type: "plain_text", text: "Delete", emoji: true },
      deny: { type: "plain_text", text: "Cancel", emoji: true },
      style: "danger",
    });
    const buttons = viewButtons(v);
    expect(buttons.map((b) => [b.label, b.value, actionKind(b.actionId)])).toEqual([
      ["Forget me", "forget me", "next"],
      ["Delete", "forget e1", "command"],
      ["Edit persona", "persona set", "input"],
      ["Approve", "approve p1", "command"],
      ["Reject", "reject p1", "command"],
      [PREVIOUS_LABEL, "proposals:0", "page"],
      [MORE_LABEL, "proposals:2", "page"],
    ]);
    expect(buttons.find((b) => b.label === "Approve")!.style).toBe("primary");
    // Unique action ids, all routed to the Home listener; item sections name their group and item.
    expect(new Set(buttons.map((b) => b.actionId)).size).toBe(buttons.length);
    expect(buttons.every((b) => HOME_ACTION_ID.test(b.actionId))).toBe(true);
    expect(v.blocks[11]!.block_id).toMatch(/^item:\d+:proposals:p1$/);
    expect(parsePageValue("channel-lessons:12")).toEqual({ group: "channel-lessons", page: 12 });
    expect(parsePageValue("nonsense")).toBeNull();
    expect(actionKind("cairn_feedback")).toBeNull();
    expect(actionKind("cairn_cmd:x")).toBeNull();
  });

  it("keeps each group's page and the page size in private_metadata", () => {
    const v = homeView(sample(), 7).view;
    expect(decodeState(v.private_metadata, 5)).toEqual({ size: 7, pages: { proposals: 1 } });
  });

  it("shows the command's answer on top, and someone without access a line saying so", () => {
    const v = valid(homeView(sample(), 5, "Pinned `deploy`.").view);
    expect(v.blocks[0]).toEqual({ type: "context", elements: [{ type: "mrkdwn", text: "Pinned `deploy`." }] });
    const none = valid(homeView({ pane: "home", admin: false, sections: [] }, 5).view);
    expect(none.blocks.map((b) => b.text?.text)).toEqual([NOT_ENABLED]);
  });

  it("clips text to Slack's limits: labels to 75, confirmation text to 300, sections to 3,000 without cutting an escape or a mention", () => {
    const long = "x".repeat(2990) + " & <#C123456> tail";
    const view: TeamView = {
      pane: "home",
      admin: false,
      sections: [
        {
          id: "you",
          title: "Y".repeat(200),
          lines: [long],
          buttons: [],
          groups: [group("profile", [item("e1", long, [{ ...del("e1"), label: "L".repeat(100), confirm: { title: "T".repeat(150), text: "t".repeat(400), yes: "Y".repeat(40), no: "N".repeat(40) } }])])],
        },
      ],
    };
    const v = valid(homeView(view, 5).view);
    expect(v.blocks[0]!.text!.text).toHaveLength(150);
    const line = v.blocks[1]!.text!.text;
    expect(line.length).toBeLessThanOrEqual(3000);
    expect(line.endsWith("…")).toBe(true);
    expect(line).not.toMatch(/&(a|am)?…$|<#C?\d*…$/);
    const b = viewButtons(v)[0]!;
    expect(b.label).toHaveLength(75);
    expect(String((b.confirm!.text as { text: string }).text)).toHaveLength(300);
  });

  it("reports a view over 100 blocks, and as a last resort cuts items but never the pagination buttons", () => {
    const many = Array.from({ length: 60 }, (_, i) => item(`s${i}`, `skill ${i}`, judge(`s${i}`)));
    const view: TeamView = { pane: "home", admin: true, sections: [{ id: "skills", title: "Skills", lines: [], buttons: [], groups: [group("skills", many, { total: 600, pages: 10 })] }] };
    const big = homeView(view, 60);
    expect(big.fits).toBe(false);
    expect(big.blocks).toBe(1 + 1 + 60 * 2 + 1);
    const cut = homeView(view, 60, undefined, { cut: true });
    const v = valid(cut.view);
    expect(v.blocks).toHaveLength(100);
    expect(v.blocks.at(-1)).toMatchObject({ type: "actions", block_id: "nav:skills" });
    expect(viewButtons(v).filter((b) => actionKind(b.actionId) === "page").map((b) => b.label)).toEqual([MORE_LABEL]);
  });
});

describe("home state", () => {
  it("round-trips pages and size, leaves first pages out, and reads junk as first pages", () => {
    const text = encodeState({ size: 10, pages: { skills: 3, profile: 0 } });
    expect(JSON.parse(text)).toEqual({ p: { skills: 3 }, s: 10 });
    expect(decodeState(text, 5)).toEqual({ size: 10, pages: { skills: 3 } });
    for (const junk of [undefined, "", "{", "null", JSON.stringify({ p: { a: -1 }, s: 5 }), JSON.stringify({ s: 0 })]) expect(decodeState(junk, 5)).toEqual(initialState(5));
  });

  it("never writes more than private_metadata takes", () => {
    const pages = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`group-number-${i}`, i + 1]));
    expect(encodeState({ size: 5, pages }).length).toBeLessThanOrEqual(PRIVATE_METADATA_LIMIT);
  });

  it("keeps the first item of each page when the page size changes", () => {
    expect(resize({ size: 10, pages: { skills: 3 } }, 4)).toEqual({ size: 4, pages: { skills: 7 } });
    expect(resize({ size: 4, pages: { skills: 7 } }, 10)).toEqual({ size: 10, pages: { skills: 2 } });
  });
});

describe("home modals", () => {
  const state = { size: 10, pages: { skills: 2 } };

  it("answers in sections of at most 3,000 characters", () => {
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: ${"words ".repeat(30)}`).join("\n\n");
    const m = valid(answerModal("Pin", text), "modal");
    expect(m.blocks.length).toBeGreaterThan(1);
    expect(m.blocks.every((b) => b.type === "section" && b.text!.text.length <= 3000)).toBe(true);
    expect(m.callback_id).toBeUndefined();
    expect(m.submit).toBeUndefined();
  });

  it("offers the next step as the submit, with the next command line and the Home state in private_metadata", () => {
    const m = valid(nextModal("Forget me", "This erases …", forgetMe.next!, state), "modal");
    expect(m.callback_id).toBe(HOME_CALLBACKS.next);
    expect(HOME_CALLBACK_ID.test(m.callback_id!)).toBe(true);
    expect(m.submit).toEqual({ type: "plain_text", text: "Erase everything", emoji: true });
    expect(decodeModal(m.private_metadata)).toEqual({ run: "forget me confirm", state });
  });

  it("asks for text in a field within Slack's limits, the initial text cut to fit", () => {
    const b = { ...persona, input: { ...persona.input!, maxLength: 5000, initial: "p".repeat(4000), title: "A title longer than twenty-four" } };
    const m = valid(inputModal(b, state), "modal");
    expect(m.callback_id).toBe(HOME_CALLBACKS.input);
    expect(m.title!.text.length).toBeLessThanOrEqual(24);
    const input = m.blocks[0]!;
    expect(input.block_id).toBe(INPUT_BLOCK_ID);
    expect(input.element).toMatchObject({ type: "plain_text_input", action_id: INPUT_ACTION_ID, multiline: true, max_length: 3000 });
    expect(input.element!.initial_value).toHaveLength(3000);
    expect(decodeModal(m.private_metadata)).toEqual({ run: "persona set", state });
  });
});
