/**
 * Role impersonation: text written as a system or assistant turn, or in a chat template's markers,
 * so that it reads to the model as something other than stored content.
 */
import { E, rx, type PatternRule } from "./pattern.ts";

/** Tag names are matched all-lowercase or all-uppercase: `<System>` is a JSX component, not a turn marker. */
const ROLE_TAG = String.raw`system|assistant|im_start|im_end|im_sep|system_prompt|system-prompt|system-reminder|system_message|function_calls|function_results|tool_result|tool_use`;

export const ROLE_RULES: PatternRule[] = [
  {
    kind: "role_impersonation",
    label: "line written as a system or assistant turn",
    forms: ["plain"],
    // Content must follow on the same line: a bare `system:` YAML key with a nested block is structure, not a turn.
    re: rx(String.raw`^[ \t>]*(?:system|assistant|human)(?:\s+(?:message|prompt|note|override|instructions?))?[ \t]*[:：][ \t]*\S[^\n]*`, "gimu"),
  },
  {
    kind: "role_impersonation",
    label: "bracketed role marker",
    forms: ["plain"],
    re: rx(String.raw`\[\s*/?\s*(?:system|assistant|inst|sys|system\s+message|system\s+prompt)\s*\](?!\(|\[|:\s*<?(?:https?:|mailto:|/|#|\.))|<</?SYS>>`),
  },
  {
    kind: "role_impersonation",
    label: "chat-template role tag",
    forms: ["deconf"],
    re: new RegExp(String.raw`(?<![\w$.])<\s*/?\s*(?:${ROLE_TAG}|${ROLE_TAG.toUpperCase()})(?:\s[^<>\n]{0,200})?>`, "gu"),
  },
  {
    kind: "role_impersonation",
    label: "special model token",
    forms: ["deconf"],
    re: rx(String.raw`<\|\s*[A-Za-z_]{2,30}\s*\|>`),
  },
  {
    kind: "role_impersonation",
    label: "heading written as a prompt section",
    forms: ["plain"],
    re: rx(String.raw`^[ \t]*#{1,6}[ \t]*(?:system|instructions?|response|system\s+prompt|system\s+message)[ \t]*[:：]|^[ \t]*#{1,6}[ \t]*(?:new|secret|hidden|real|actual)\s+(?:system\s+)?instructions${E}`, "gimu"),
  },
];
