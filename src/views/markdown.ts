/**
 * A view as Markdown: `/cairn team` on every platform, and what a platform without a rich form
 * shows. Items carry their ids, so each button's command can be typed instead.
 */
import type { TeamView, ViewButton, ViewGroup } from "../ground/view-model.ts";

const commandLine = (b: ViewButton): string => `\`${[b.command, ...b.args].join(" ")}${b.input ? " <text>" : ""}\``;

function groupMarkdown(g: ViewGroup): string[] {
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
  const out: string[] = [];
  for (const s of view.sections) {
    out.push(`**${s.title.toUpperCase()}**`, ...s.lines);
    for (const g of s.groups) out.push(...groupMarkdown(g));
    if (s.buttons.length) out.push(s.buttons.map((b) => `${b.label}: ${commandLine(b)}`).join(" · "));
  }
  return out.join("\n");
}
