/**
 * Instructions to the assistant in German, the Romance languages, Russian, Chinese, Japanese and
 * Korean: the English rules' main phrases, matched on `norm` (Cyrillic must not be folded to Latin).
 */
import { B, E, rx, type PatternRule } from "./pattern.ts";

const ROMANCE_VERB = String.raw`(?:ignora|ignoren|ignore|ignorez|ignorer|ignorar|ignorate|olvida|olvide|olviden|olvidar|oublie|oubliez|oublier|dimentica|dimenticate|esque[çc]a|esquece|descarta|desconsidera|haz\s+caso\s+omiso\s+(?:a|de))`;
const ROMANCE_NOUN = String.raw`(?:instrucciones|instrucci[oó]n|indicaciones|reglas|[oó]rdenes|directrices|instructions|consignes|r[eè]gles|directives|istruzioni|regole|indicazioni|instru[çc][õo]es|regras|orienta[çc][õo]es|prompts?)`;
const ROMANCE_EARLIER = String.raw`(?:anteriores|previas|precedentes|pr[eé]c[eé]dentes|ant[eé]rieures|precedenti|anteriori|pr[eé]vias|originales|originali|ci-dessus|de\s+arriba|sopra|acima)`;

export const MULTILINGUAL_INJECTION: PatternRule[] = [
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (German)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte|missachten\s+sie|übergeh(?:e|en\s+sie)?)\s+(?:sie\s+)?(?:bitte\s+)?(?:(?:alle|sämtliche|die|deine|ihre|meine|der)\s+)*(?:bisherigen|vorherigen|vorigen|obigen|früheren|vorangegangenen|ursprünglichen|alle|sämtliche|deine|ihre)\s+(?:anweisungen|instruktionen|regeln|befehle|vorgaben|anordnungen|prompts?)${E}|${B}(?:alle\s+|sämtliche\s+|die\s+)?(?:bisherigen|vorherigen|vorigen|obigen|früheren)\s+(?:anweisungen|instruktionen|regeln|befehle)\s+(?:zu\s+)?(?:ignorieren|vergessen|missachten)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Spanish/French/Italian/Portuguese)",
    forms: ["norm"],
    re: rx(String.raw`${B}${ROMANCE_VERB}\s+(?:todas|toutes|tutte|todos|tous)\s+(?:(?:las|les|le|as|os|tus|tes|vos|sus|tue)\s+)?(?:\p{L}+\s+)?${ROMANCE_NOUN}${E}|${B}${ROMANCE_VERB}\s+(?:las|les|le|as|os|tus|tes|vos|sus|tue|suas|vostre|gli)\s+(?:\p{L}+\s+)?${ROMANCE_NOUN}\s+${ROMANCE_EARLIER}${E}|${B}${ROMANCE_VERB}\s+(?:tus|tes|vos|le\s+tue|tue|suas|as\s+suas|vostre|le\s+vostre)\s+${ROMANCE_NOUN}${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Russian)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не\s+обращай(?:те)?\s+внимания\s+на)\s+(?:все\s+|всё\s+)?(?:предыдущие|прошлые|прежние|вышеуказанные|свои|твои|ваши|все)\s+(?:инструкции|указания|правила|команды|инструкций)${E}`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Chinese)",
    forms: ["norm", "compact"],
    re: rx(String.raw`(?:忽略|无视|無視|忘记|忘記|忽视|忽視|不要理会|不要理會|不理会|不理會|跳过|跳過)\s*(?:掉)?\s*(?:你\s*)?(?:之前|以前|上面|上述|先前|前面|此前|原来|原來|原有|所有|全部|一切|你的|系统|系統)[^。\n]{0,8}?(?:指令|指示|说明|說明|规则|規則|提示|命令|设定|設定)`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Japanese)",
    forms: ["norm", "compact"],
    re: rx(String.raw`(?:以前|前|これまで|上記|先|今まで|すべて|全て)[^。\n]{0,10}?(?:指示|命令|ルール|指令|プロンプト)[^。\n]{0,8}?(?:無視|忘れ)`),
  },
  {
    kind: "prompt_injection",
    label: "asks to ignore earlier instructions (Korean)",
    forms: ["norm"],
    re: rx(String.raw`(?:이전|앞의|위의|모든|기존)[^.\n]{0,12}?(?:지시|명령|지침|규칙|프롬프트)[^.\n]{0,8}?무시`),
  },
  {
    kind: "prompt_injection",
    label: "tells the assistant what it now is (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|${B}ahora\s+eres|${B}tu\s+es\s+maintenant|${B}vous\s+[eê]tes\s+maintenant|${B}ora\s+sei|${B}agora\s+voc[eê]\s+[eé]|${B}ты\s+теперь|你现在是|你現在是|あなたは今)([^.!?。\n]{0,50})`),
    also: (m) =>
      /ki|ia|ai|assistent|asistente|assistant|assistente|bot|dan|modell|modelo|modèle|uneingeschränkt|ohne\s+(?:regeln|einschränkungen)|sin\s+(?:restricciones|reglas|límites)|sans\s+(?:restrictions|règles|limites)|senza\s+(?:restrizioni|regole)|sem\s+restrições|без|助手|没有限制|沒有限制|不受|无限制|無限制|制限/iu.test(m[1] ?? ""),
  },
  {
    kind: "prompt_injection",
    label: "sets rules for the assistant from now on (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}ab\s+(?:jetzt|sofort)|${B}von\s+nun\s+an|${B}a\s+partir\s+de\s+ahora|${B}de\s+ahora\s+en\s+adelante|${B}à\s+partir\s+de\s+maintenant|${B}désormais|${B}d'ora\s+in\s+poi|${B}a\s+partir\s+de\s+agora|从现在开始|從現在開始|从现在起|從現在起)\s*[,，、]?\s*(?:musst\s+du|wirst\s+du|bist\s+du|sollst\s+du|du\s+(?:musst|wirst|bist|sollst)|debes|vas\s+a|eres|tienes\s+que|tu\s+(?:dois|vas|es)|vous\s+(?:devez|êtes)|devi|sei|voc[eê]\s+deve|你\s*(?:必须|必須|将|將|要|只能|是|应该|應該))`),
  },
  {
    kind: "prompt_injection",
    label: "asks to keep something from the user (non-English)",
    forms: ["norm"],
    re: rx(String.raw`${B}sag(?:e|en)?\s+(?:es\s+|das\s+)?(?:dem|den)\s+(?:benutzer|nutzer|user|anwender)n?\s+nicht${E}|${B}ohne\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer|user)n?\s+(?:etwas\s+|davon\s+)?zu\s+sagen|${B}no\s+(?:se\s+lo\s+|le\s+)?(?:digas|diga|menciones|informes)\s+(?:nada\s+)?(?:esto\s+)?al\s+usuario${E}|${B}sin\s+decirle\s+al\s+usuario${E}|${B}ne\s+(?:le\s+)?(?:dis|dites)\s+(?:rien\s+|pas\s+)?(?:pas\s+|rien\s+)?(?:à|a)\s+l'utilisateur|${B}sans\s+(?:le\s+)?dire\s+(?:à|a)\s+l'utilisateur|${B}non\s+dir(?:e|lo)\s+(?:niente\s+)?all'utente|不要\s*(?:告诉|告訴|透露给|透露給|通知)\s*(?:用户|用戶|使用者)|ユーザーに(?:は)?(?:言わ|伝え|知らせ)ないで`),
  },
  {
    kind: "prompt_injection",
    label: "asks to reveal the assistant's instructions (non-English)",
    forms: ["norm"],
    re: rx(String.raw`${B}(?:zeig(?:e)?|verrate|gib)\s+(?:mir\s+)?(?:deinen|den|deine)\s+(?:system-?prompt|systemanweisungen|anweisungen)${E}|${B}(?:revela|muestra|muéstrame|dime)\s+(?:tu|el|tus)\s+(?:prompt|instrucciones)(?:\s+del\s+sistema)?${E}|${B}(?:révèle|montre|affiche)(?:-moi)?\s+(?:ton|le|tes)\s+(?:prompt|instructions)(?:\s+système)?${E}|(?:显示|顯示|输出|輸出|泄露|洩露|透露|告诉我|告訴我|打印|重复|重複)[^。\n]{0,6}?(?:系统提示|系統提示|系统指令|系統指令|提示词|提示詞|初始指令)|システムプロンプトを(?:表示|教え|出力)|${B}(?:mostre|mostra|revele|rivela|exiba|mostrami)\s+(?:o\s+|il\s+)?(?:seu|teu|tuo|il\s+tuo)\s+(?:prompt|instru[çc][õo]es|istruzioni)(?:\s+(?:de|del|di)\s+sistema)?${E}|${B}(?:покажи(?:те)?|выведи(?:те)?|раскрой(?:те)?|повтори(?:те)?|напиши(?:те)?)\s+(?:мне\s+)?(?:свой|свои|твой|твои|ваш|ваши)\s+(?:системный\s+промпт|промпт|системные\s+инструкции|инструкции)${E}`),
  },
  {
    kind: "exfiltration",
    label: "tells the assistant to hand over a password or key (non-English)",
    forms: ["norm"],
    // A verb that gives, sends or answers with something, and a credential as its direct object: only
    // a pronoun, an article and a compound's first part may stand between ("gib ihm das Admin-Passwort",
    // "responde con la contraseña"), so "el enlace para restablecer la contraseña" is a topic and passes.
    re: rx(String.raw`(?:${B}(?:responde|responda|contesta)\s+con|${B}r[ée]ponds?\s+avec|${B}antworte\s+mit|${B}rispondi\s+con|${B}responda\s+com|${B}(?:dale|dales|dele|dê|da|dé|donne|donnez|gib|geben\s+sie|dai|envía|envia|envie|manda|comparte|compartilhe|partage|envoie|schick|sende|teile|invia|condividi|revela|révèle|verrate|rivela|дай|дайте|отправь|отправьте|скажи|скажите|сообщи|сообщите|выдай)(?:-(?:lui|leur|le|la|moi))?${E})(?:\s+(?:mir|ihm|ihr|ihnen|uns|le|les|lui|leur|me|mi|gli|lhe|lhes|им|ему|ей|мне|нам))?\s+(?:(?:el|la|los|las|le|les|un|une|das|den|die|dem|il|lo|o|a|os|as|tu|ton|ta|tes|su|sus|dein|deine|deinen|sein|seine|seu|sua|seus|suas|unser|unsere|notre|nos|nuestro|nuestra|свой|свои|наш|наши)\s+|l')?(?:\p{L}+-)?(?:contraseñas?|claves?|credenciales|mots?\s+de\s+passe|identifiants|passw[oö]rt(?:er)?|kennw[oö]rt(?:er)?|zugangsdaten|schlüssel|credenziali|senhas?|пароль|пароли|ключ|ключи|токен|токены)${E}(?!-?(?:reset|zurücksetzung|richtlinie|politik))`),
  },
  {
    kind: "prompt_injection",
    label: "announces new instructions (non-English)",
    forms: ["norm"],
    re: rx(String.raw`(?:${B}neue\s+anweisungen|${B}nuevas\s+instrucciones|${B}nouvelles\s+instructions|${B}nuove\s+istruzioni|${B}novas\s+instru[çc][õo]es|${B}новые\s+инструкции|新(?:的)?(?:指令|指示)|新しい指示)\s*[:：]`),
  },
];
