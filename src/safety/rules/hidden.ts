/**
 * Hidden markup: comments and hidden HTML elements that a person reading the rendered text would
 * not see, but the model reads. Matched outside fenced code blocks (the `prose` form).
 */
import { rx, type PatternRule } from "./pattern.ts";

export const HIDDEN_RULES: PatternRule[] = [
  {
    kind: "hidden_comment",
    label: "HTML comment",
    forms: ["prose"],
    re: rx(String.raw`<!--[\s\S]*?(?:-->|$)`),
  },
  {
    kind: "hidden_comment",
    label: "markdown comment",
    forms: ["prose"],
    re: rx(String.raw`^[ \t]*\[[^\]\n]*\]:[ \t]*(?:#|<>)[ \t]*[("']`, "gimu"),
  },
  {
    kind: "hidden_comment",
    label: "HTML element hidden from view",
    forms: ["prose"],
    re: rx(String.raw`<[a-z][^<>]{0,300}\sstyle\s*=\s*["'][^"'<>]{0,300}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\s*(?:[;"']|$)|opacity\s*:\s*0\s*(?:[;"']|$))|<[a-z][^<>]{0,300}\shidden(?:\s|=|/?>)`),
  },
];
