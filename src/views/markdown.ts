/**
 * A view as Markdown: `/cairn team` on every platform, and what a platform without a rich form
 * shows. Items carry their ids, so each button's command can be typed instead: the ids short
 * (ground/short-id.ts), unique among the view's; the buttons themselves keep the whole ids.
 */
import type { TeamView, ViewButton, ViewGroup } from "../ground/view-model.ts";
import { looksLikeCuid, shortIds } from "../ground/short-id.ts";

type Line = (b: ViewButton) => string;

const lineOf =
  (short: (id: string) => string): Line =>
  (b) =>
    `\`${[b.command, ...b.args.map((a) => (looksLikeCuid(a) ? short(a) : a))].join(" ")}${b.input ? " <text>" : ""}\``;

function groupMarkdown(g: ViewGroup, commandLine: Line): string[] {
  const more = g.pages > 1 ? ` (page ${g.page + 1} of ${g.pages}, ${g.total} in all)` : g.total ? ` (${g.total})` : "";
  const lines = [`**${g.title}**${more}`];
  if (g.items.length === 0) lines.push(`- ${g.empty}`);
  for (const item of g.items) {
    const buttons = item.buttons.length ? ` · ${item.buttons.map((b) => `${b.label}: ${commandLine(b)}`).join(" · ")}` : "";
    lines.push(`- ${item.markdown}${buttons}`);
  }
  return lines;
}

export function viewMarkdown(view: TeamView): string {
  const buttons = view.sections.flatMap((s) => [...s.buttons, ...s.groups.flatMap((g) => g.items.flatMap((i) => i.buttons))]);
  const commandLine = lineOf(shortIds(buttons.flatMap((b) => b.args.filter(looksLikeCuid))));
  const out: string[] = [];
  for (const s of view.sections) {
    out.push(`**${s.title.toUpperCase()}**`, ...s.lines);
    for (const g of s.groups) out.push(...groupMarkdown(g, commandLine));
    if (s.buttons.length) out.push(s.buttons.map((b) => `${b.label}: ${commandLine(b)}`).join(" · "));
  }
  return out.join("\n");
}
