/**
 * Instructions to the assistant written in English: ignoring earlier instructions, new personas and
 * rules, revealing or replacing the system prompt, secrecy from the user, jailbreak wording.
 */
import { B, E, NOT, rx, testNoState, type PatternRule } from "./pattern.ts";

const IGNORE = String.raw`(?:ignore|disregard|forget|bypass|set\s+aside|put\s+aside|discard|abandon|throw\s+out|pay\s+no\s+attention\s+to|stop\s+following|do\s+not\s+follow|don't\s+follow|no\s+longer\s+follow)`;
const INSTRUCTION_NOUN = String.raw`(?:instructions?|rules|prompts?|directions?|directives?|guidelines|commands|orders|guidance|constraints|context)`;
const EARLIER = String.raw`(?:previous|prior|above|earlier|preceding|former|original|initial|system|developer)(?:\s+(?:system|developer|original|initial|safety|security|operator))?`;

/** Words naming an AI persona or a lifted restriction: what "you are now ..." turns hostile with. */
const PERSONA = rx(
  String.raw`${B}(?:ai|a\.i\.|assistant|bot|chatbot|model|llm|gpt|chatgpt|claude|dan|persona|character|jailbroken|unrestricted|unfiltered|uncensored|unbound|evil|mode|no\s+longer|free\s+(?:from|of)|without\s+(?:any\s+)?(?:rules|restrictions|limits|limitations|filters|guidelines))${E}`,
);

export const ENGLISH_INJECTION: PatternRule[] = [
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:(?:all|any|every|each|of|the|your|my|these|those)\s+)*${EARLIER}\s+${INSTRUCTION_NOUN}${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore all instructions",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:all|any|every)\s+(?:of\s+)?(?:(?:your|the|my)\s+)?(?:instructions|prompts?|directions|guidelines|directives)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore the assistant's own rules",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:all\s+(?:of\s+)?)?(?:your|my|cairn'?s|the\s+(?:team'?s|bot'?s|assistant'?s|workspace'?s))\s+(?:own\s+)?(?:instructions|rules|prompts?|directions|guidelines|directives|programming|training|guardrails|restrictions|system\s+prompt|lessons|memory)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore everything said before",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}${IGNORE}\s+(?:everything|all|anything|what|whatever|all\s+that)\s+(?:(?:was\s+)?(?:above|before|prior|previously|earlier)|you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|given|instructed|asked)|(?:was|has\s+been)\s+(?:said|written)\s+(?:above|before|earlier))${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore the text above and do something else",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:ignore|disregard)\s+(?:the\s+)?(?:above|preceding)(?:\s+\w+)?\s*(?:,\s*)?(?:and|then)\s+(?:instead|say|respond|reply|output|print|write|tell|answer)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (spaced or disguised)",
    forms: ["compact"],
    re: rx(String.raw`(?<!dont|donot|never|not)(?:ignore|disregard|forget)(?:all|any|every)?(?:of)?(?:the|your|my)?(?:previous|prior|above|earlier|preceding)(?:instructions?|rules|prompts?|directions?|guidelines|commands|directives)`),
  },
  {
    kind: "prompt_injection",
    label: "announces new instructions",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:new|real|actual|secret|hidden|true)\s+(?:system\s+)?(?:instructions?|directives?|orders|rules)\s*[:：]|${B}system\s+(?:instructions?|override)\s*[:：]|${B}your\s+(?:new|real|actual|secret|hidden|true|top|first|main|overriding|only)\s+(?:[\w-]+\s+){0,2}?(?:rule|instruction|directive|order|priority|objective|goal|task)s?\s*[:：]|${B}(?:top|highest|overriding|prime)[\s-]+priority\s+(?:rule|instruction|directive|order)s?\s*[:：]`),
  },
  {
    kind: "prompt_injection",
    label: "tells the assistant what it now is",
    forms: ["plain"],
    re: rx(String.raw`${B}you(?:'re|\s+are)\s+now\s+([^.!?\n]{0,60})`),
    also: (m) => testNoState(PERSONA, m[1] ?? ""),
  },
  {
    kind: "prompt_injection",
    label: "sets rules for the assistant from now on",
    forms: ["plain"],
    re: rx(String.raw`${B}from\s+now\s+on\s*[,:]?\s*(?:you|the\s+(?:assistant|bot|ai|model)|(?:always|never|only)\s+(?:respond|reply|answer|say|output|include|add|append))(?:\s+(?:will|must|are|should|shall|have\s+to|need\s+to|may\s+only|can\s+only))?${E}`),
    also: (m) => !/^from\s+now\s+on\s*[,:]?\s*you$/i.test(m[0].trim()),
  },
  {
    kind: "prompt_injection",
    label: "asks the assistant to act as another role",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:the\s+|a\s+|an\s+)?(?:system|unrestricted|unfiltered|uncensored|jailbroken|evil|dan)${E}|${B}pretend\s+(?:to\s+be|you\s+are|you're)\s+(?:the\s+|a\s+|an\s+)?(?:system|unrestricted|unfiltered|uncensored|jailbroken|evil|dan|different\s+(?:ai|assistant|model))${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to reveal the assistant's instructions",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:reveal|print|show|output|repeat|display|leak|dump|recite|tell\s+me|give\s+me|write\s+out|share|paste|spell\s+out)\s+(?:me\s+)?(?:your|the\s+(?:full|entire|complete|hidden|original|initial|exact|verbatim))\s+(?:\w+\s+){0,2}?(?:system\s+prompt|instructions|initial\s+prompt|hidden\s+prompt|prompt|guidelines|configuration)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "tries to replace the system prompt",
    forms: ["plain"],
    re: rx(String.raw`${NOT}${B}(?:ignore|override|replace|overwrite|forget|disregard|bypass)\s+(?:\w+\s+){0,2}?system\s+prompt${E}|${B}(?:new|updated|real|override)\s+system\s+prompt\s*[:：]|${B}system\s+prompt\s*[:：]\s*\S|${B}(?:your|the)\s+system\s+prompt\s+(?:is\s+now|has\s+(?:been\s+)?(?:replaced|changed|updated))`),
  },
  {
    kind: "prompt_injection",
    label: "asks to override the assistant's rules",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:override|bypass|circumvent|disable|ignore|turn\s+off)\s+(?:all\s+(?:of\s+)?)?(?:your|the\s+(?:assistant|system|bot|model|ai)(?:'s)?)\s+(?:\w+\s+)?(?:rules|instructions|guidelines|restrictions|safety|safeguards|filters|programming|policies|constraints|guardrails)${E}|${B}override\s+(?:the\s+)?(?:instructions|guidelines)${E}|${B}(?:override|bypass|disable|turn\s+off)\s+(?:the\s+|all\s+|any\s+)?(?:safety|content)\s+(?:rules|filters?|guidelines|restrictions|guardrails|policies)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to keep something from the user",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:do\s+not|don't|dont|never)\s+(?:tell|inform|mention|reveal|disclose|say)\s+(?:this\s+|it\s+|anything\s+|that\s+)?(?:to\s+)?(?:the\s+)?(?:users?|humans?|requester|operator)(?!'s)${E}|${B}without\s+(?:telling|informing|alerting)\s+(?:the\s+)?(?:users?|humans?)${E}|${B}(?:do\s+not|don't|dont|never)\s+let\s+(?:the\s+)?(?:users?|humans?)\s+(?:know|find\s+out|notice|see\s+this)${E}|${B}(?:keep|hide)\s+(?:this|it)\s+(?:secret\s+|hidden\s+)?from\s+(?:the\s+)?(?:users?|humans?)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to decode something and act on it",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:decode|decrypt|unscramble|de-?obfuscate|reverse|translate)${E}[^\n.]{0,40}?${B}(?:and|then)\s+(?:follow|execute|run|obey|do|apply|carry\s+out|act\s+on)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "jailbreak wording",
    forms: ["plain"],
    re: rx(String.raw`${B}jail\s?(?:break|breaks|broken|breaking)${E}|${B}do\s+anything\s+now${E}|${B}dan\s+mode${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks the assistant to switch to developer mode",
    forms: ["plain"],
    re: rx(String.raw`${B}developer\s+mode${E}`),
    also: (m, src) =>
      /you\s+(?:are|will|must|can\s+now|now)|you're|assistant|chatgpt|claude|\bai\b|llm|language\s+model|uncensored|unfiltered|restrictions|content\s+polic|no\s+limits|anything\s+now|your\s+(?:responses?|answers?|outputs?|rules)/i.test(
        src.slice(Math.max(0, m.index - 100), m.index + m[0].length + 100),
      ),
  },
  {
    kind: "prompt_injection",
    label: "addresses an AI reading the text",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:if|when)\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|language\s+model|assistant|chatbot|bot|agent|gpt|claude)${E}|${B}(?:note|message|instructions?|attention|important)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|assistant|bot|model|language\s+model|agent|claude|chatgpt)s?${E}\s*[:：,!]|${B}(?:ai|llms?|assistants?|agents?|claude|chatgpt|bots?)\s+(?:reading|processing|parsing|summari[sz]ing)\s+this${E}`),
  },
  {
    kind: "exfiltration",
    label: "asks the assistant to put secrets into its replies",
    forms: ["plain"],
    re: rx(String.raw`${B}(?:include|append|add|insert|embed|put|print|output)\s+(?:the\s+|your\s+|all\s+|any\s+|our\s+)*(?:[\w-]+\s+)?(?:api\s+keys?|keys?|tokens?|secrets?|passwords?|credentials|system\s+prompt|env(?:ironment)?\s+variables)\s+(?:in|into|to|at\s+the\s+end\s+of)\s+(?:your|every|each|all|the\s+next)\s+(?:\w+\s+)?(?:reply|replies|response|responses|answer|answers|message|messages|output)${E}`),
  },
];
