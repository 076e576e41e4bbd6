/**
 * Text that tells cairn to change its own rules, configuration or safety, and text that plants
 * access or persistence somewhere (authorized keys, scheduled tasks, startup files). Written by
 * class, not by example: a review or a correction is the path such text takes into memory.
 *
 * Both stay narrow where people write the same words for people: "update your config", "add your
 * SSH key to GitHub", "a cron job that backs up the database" are runbook prose and pass. What
 * fires names the assistant's own machinery (its system prompt, its scanner, its admin list), or
 * ties a foothold to a network fetch, a shell or an outside address.
 */
import { B, E, NOT, rx, type PatternRule } from "./pattern.ts";

/** The assistant's own machinery: nobody's runbook tells a person to edit these. */
const OWN = String.raw`(?:your|cairn'?s|the\s+(?:bot|assistant|agent|ai|model)'?s|its)\s+(?:own\s+)?`;
const MACHINERY = String.raw`(?:system\s+prompt|(?:core\s+|base\s+|original\s+)?instructions|guidelines|directives|guardrails|safeguards|safety(?:\s+(?:rules|checks?|filters?|settings|policy|policies))?|content\s+(?:filters?|scanners?|checks?|policy)|(?:memory\s+|injection\s+|secret\s+)?scanner|moderation|restrictions|(?:admin|admins|allow|allowed\s+users|access)\s*(?:list|set|rules)|configuration|config|settings|rules)`;
/** Safety machinery named without a possessive ("the content scanner"): still the assistant's. */
const SAFETY = String.raw`(?:(?:safety|security|content|injection|secret|memory)\s+(?:filters?|scanners?|checks?|guardrails|rules|moderation)|guardrails|safeguards|scanner)`;
const DISABLE = String.raw`(?:disable|turn\s+off|switch\s+off|deactivate|bypass|circumvent|get\s+around|skip|ignore|override|remove|drop|relax|loosen|weaken|lower|suspend|pause)`;
const REWRITE = String.raw`(?:change|update|modify|edit|rewrite|overwrite|replace|append\s+to|add\s+to|extend|amend)`;
/** A foothold is hostile when it fetches, spawns a shell or reaches out. */
const REACH = String.raw`(?:https?://|${B}(?:curl|wget|nc|ncat|netcat|socat|iwr|invoke-webrequest|invoke-expression|iex|powershell|bash\s+-i|sh\s+-i|python[0-9.]*\s+-c)${E}|/dev/tcp/|base64\s+-d)`;
const SCHEDULE = String.raw`(?:cron\s*jobs?|crontab|cron\s+entr(?:y|ies)|scheduled\s+tasks?|schtasks|systemd\s+(?:timers?|units?|services?)|launch\s*(?:agents?|daemons?)|launchd|login\s+items?|startup\s+(?:items?|scripts?|folder))`;
const STARTUP_FILE = String.raw`(?:\$PROFILE${E}|\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zlogin)|/etc/(?:rc\.local|profile(?:\.d)?|crontab|cron\.d)|\\Start\s+Menu\\Programs\\Startup|CurrentVersion\\Run(?:Once)?)`;

const WRITES_TO_FILE = rx(String.raw`>>?|${B}(?:tee|add-content|set-content|reg\s+add|new-itemproperty|append|add|write|put)${E}`, "iu");
const REACHES = rx(REACH, "iu");

export const TAMPERING_RULES: PatternRule[] = [
  {
    kind: "self_tampering",
    label: "tells the assistant to switch off or change its own instructions or safety",
    forms: ["plain", "deconf"],
    re: rx(String.raw`${NOT}${B}(?:${DISABLE}|${REWRITE})${E}\s+(?:${OWN})${MACHINERY}${E}`),
    // "change your settings" is also what a runbook tells a person: only with the assistant's
    // own machinery named, or with a clue that the change is about what it trusts or checks.
    also: (m, src) => !/(?:configuration|config|settings|rules)$/i.test(m[0]) || /\b(?:admin|allow|trust|permission|scanner|safety|filter|guardrail|instruction|prompt|cairn|bot|assistant)/i.test(src.slice(m.index, m.index + m[0].length + 80)),
  },
  {
    kind: "self_tampering",
    label: "tells the assistant to switch off its safety checks",
    forms: ["plain", "deconf"],
    re: rx(String.raw`${NOT}${B}${DISABLE}${E}\s+(?:the\s+|all\s+|any\s+)?${SAFETY}${E}`),
  },
  {
    kind: "self_tampering",
    label: "tries to make someone an admin of the assistant or trusted by it",
    forms: ["plain", "deconf"],
    re: rx(String.raw`${B}CAIRN_(?:ADMINS|ALLOWED_[A-Z]+)${E}[^\n]{0,40}(?:=|add|include|append)|${B}(?:add|put|include|make|treat)${E}[^\n]{0,40}?(?:to|in|into|as)\s+(?:${OWN})(?:admins?|admin\s+list|allow\s*list|trusted\s+(?:users|people|senders))${E}|${B}(?:always\s+)?(?:trust|obey|follow)\s+(?:any|every|all)\s+(?:instructions?|messages?|commands?|requests?)\s+from${E}`),
  },
  {
    kind: "self_tampering",
    label: "tells the assistant whom to obey or never refuse",
    forms: ["plain", "deconf"],
    // Obedience granted to someone or to a form of words: what an admin list is for, planted in memory.
    re: rx(String.raw`${NOT}${B}(?:obey|comply\s+with|execute|carry\s+out)\s+(?:any|every|all|each)\s+(?:\w+\s+)?(?:instructions?|commands?|requests?|orders?|messages?)${E}|${NOT}${B}(?:follow|do|carry\s+out|execute)\s+(?:any|every|all|each|whatever)\s+(?:\w+\s+)?(?:instructions?|commands?|requests?|orders?)\s+(?:that|which|from|by)${E}|${B}obey\s+(?:it|them|him|her|this|these|that|those)${E}|${B}obey\s+[^\n.]{1,30}?\s+(?:without\s+(?:question|questioning|hesitation|checking|exception)|no\s+questions\s+asked|even\s+over|over\s+(?:your|the)|above\s+(?:your|the)|instead\s+of\s+(?:your|the))${E}|${B}(?:messages?|instructions?|requests?|anything|whatever|commands?|text)\s+[^\n.]{0,40}?\s+(?:overrides?|supersedes?|takes?\s+precedence\s+over|trumps?|outranks?)\s+(?:all|any|every|your)\s+(?:other\s+|previous\s+|prior\s+|of\s+your\s+)?(?:guidance|instructions|rules|guidelines|directives|safeguards|policies)${E}|${B}(?:execute|obey|follow|carry\s+out|run|do)\s+whatever\s+(?:\w+\s+)?(?:instructions?|commands?|orders?|it\s+says|they\s+say)${E}|${B}(?:authority|power|control|rights|privileges|permissions)\s+over\s+(?:you|the\s+(?:bot|assistant|agent)|cairn)${E}|${B}never\s+(?:refuse|decline|deny|reject|question|say\s+no\s+to|push\s+back\s+on)\s+(?:a\s+|any\s+|the\s+)?(?:requests?|instructions?|commands?|orders?|messages?)\s+(?:from|by|of|(?:that|which)\s+(?:comes?|came)\s+from|coming\s+from|sent\s+by)${E}|${B}(?:always\s+)?(?:do|follow)\s+(?:whatever|everything|anything)\s+[^\n.]{1,30}?\s+(?:says|asks|tells\s+you|wants)${E}`),
  },
  {
    kind: "self_tampering",
    label: "tells the assistant to treat someone as an admin",
    forms: ["plain", "deconf"],
    re: rx(String.raw`${B}(?:treat|regard|consider|handle)\s+(?:[\w.@<>#'-]+\s+){1,4}?(?:(?:from|by|(?:sent|written|posted|said)\s+by|coming\s+from)\s+[^\n.]{1,40}?\s+)?as\s+(?:if\s+(?:it|they|he|she)\s+(?:came|come|were|was)\s+from\s+|(?:coming|sent)\s+from\s+|having\s+|(?:an?\s+)?(?:instructions?|commands?|orders?)\s+(?:from|by)\s+)?(?:an?\s+|the\s+)?(?:(?:workspace|team|server|guild|bot|system)\s+)?(?:admins?|administrators?|owners?|operators?|system|developers?|root|superusers?|sudo|admin\s+(?:rights|privileges|access)|trusted\s+(?:operators?|admins?|administrators?|authorit(?:y|ies)|superusers?))${E}|${B}(?:is|are)\s+(?:now\s+)?(?:an?\s+|your\s+)?(?:admin|administrator|owner|operator)\s+(?:of|over|for)\s+(?:you|the\s+(?:bot|assistant)|cairn)${E}|${B}(?:be|is|are|been)\s+treated\s+as\s+(?:if\s+(?:it|they)\s+(?:came|come|were)\s+from\s+|(?:coming|sent)\s+from\s+)?(?:(?:an?\s+)?(?:commands?|instructions?|orders?)\s+(?:from|by)\s+)?(?:an?\s+|the\s+)?(?:(?:workspace|team|server|guild|bot|system)\s+)?(?:admins?|administrators?|owners?|operators?|system|developers?|root|superusers?)${E}`),
  },
  {
    kind: "self_tampering",
    label: "switches a safety setting off",
    forms: ["plain", "deconf"],
    re: rx(String.raw`${B}(?:safety|safe[\s_-]?mode|guardrails?|safeguards?|filters?|content[\s_-]?filters?|scanners?|moderation|restrictions|censorship|alignment)\s*(?:[=:]|:=|->|=>)\s*["']?(?:off|false|0|no|none|disabled?|null)${E}`),
  },
  {
    kind: "persistence",
    label: "adds a key to an authorized_keys file",
    forms: ["deconf"],
    re: rx(String.raw`(?:${B}(?:add|append|put|write|echo|copy|cp|tee|cat|paste|insert|install)${E}|>>?)[^\n]{0,120}?authorized_keys2?${E}|authorized_keys2?${E}[^\n]{0,40}?(?:<<|ssh-(?:rsa|ed25519|dss)|ecdsa-sha2)`),
  },
  {
    kind: "persistence",
    label: "writes a command that reaches out into a startup file",
    forms: ["deconf"],
    // Found by the file's name (rare), then judged by its line: a write into it and, anywhere on
    // that line, something that reaches out. One scan of the text, however long the line.
    re: rx(STARTUP_FILE),
    also: (m, src) => {
      const start = src.lastIndexOf("\n", m.index) + 1;
      const end = src.indexOf("\n", m.index);
      const line = src.slice(start, end === -1 ? undefined : end);
      return WRITES_TO_FILE.test(line) && REACHES.test(line);
    },
  },
  {
    kind: "persistence",
    label: "sets up a scheduled task that reaches out",
    forms: ["deconf"],
    re: rx(String.raw`${B}${SCHEDULE}${E}[^\n]{0,120}?${REACH}|${REACH}[^\n]{0,120}?${B}${SCHEDULE}${E}`),
    // A schedule next to a link to its documentation is a runbook, not a foothold.
    also: (m) => !/(?:docs?|documentation|see|guide|manual|wiki)\b[^\n]{0,20}https?:\/\/[^\s]*$/i.test(m[0]) || /curl|wget|nc\b|iex|powershell|\/dev\/tcp/i.test(m[0]),
  },
];
