/**
 * English irregular forms, folded to their base word before stemming. Porter stemming joins
 * "deploying" and "deployed" but not "went" and "go", "bought" and "buy": a question asks in the
 * base form ("where did Alice go?", "what did we buy?") and the answer was told in the past ("we
 * went with Postgres", "bought the licence"). Forms that are also common words of their own are
 * left out ("left", "rose", "felt", "fell", "bit", "lead").
 */
const FORMS: Record<string, readonly string[]> = {
  become: ["became"],
  begin: ["began", "begun"],
  break: ["broke", "broken"],
  bring: ["brought"],
  build: ["built"],
  buy: ["bought"],
  catch: ["caught"],
  choose: ["chose", "chosen"],
  come: ["came"],
  draw: ["drew", "drawn"],
  drink: ["drank", "drunk"],
  drive: ["drove", "driven"],
  eat: ["ate", "eaten"],
  fight: ["fought"],
  find: ["found"],
  fly: ["flew", "flown"],
  forget: ["forgot", "forgotten"],
  get: ["got", "gotten"],
  give: ["gave", "given"],
  go: ["went", "gone"],
  grow: ["grew", "grown"],
  hear: ["heard"],
  hold: ["held"],
  keep: ["kept"],
  know: ["knew", "known"],
  lose: ["lost"],
  make: ["made"],
  mean: ["meant"],
  meet: ["met"],
  pay: ["paid"],
  ride: ["rode", "ridden"],
  run: ["ran"],
  say: ["said"],
  see: ["saw", "seen"],
  sell: ["sold"],
  send: ["sent"],
  sing: ["sang", "sung"],
  sit: ["sat"],
  sleep: ["slept"],
  speak: ["spoke", "spoken"],
  spend: ["spent"],
  stand: ["stood"],
  swim: ["swam", "swum"],
  take: ["took", "taken"],
  teach: ["taught"],
  tell: ["told"],
  think: ["thought"],
  throw: ["threw", "thrown"],
  understand: ["understood"],
  wake: ["woke", "woken"],
  wear: ["wore", "worn"],
  win: ["won"],
  write: ["wrote", "written"],
  child: ["children"],
  man: ["men"],
  woman: ["women"],
  foot: ["feet"],
  tooth: ["teeth"],
  mouse: ["mice"],
};

const BASE = new Map<string, string>(Object.entries(FORMS).flatMap(([base, forms]) => forms.map((f) => [f, base] as [string, string])));

/** The base word of an irregular form ("went" -> "go"); the word itself otherwise. */
export function baseForm(word: string): string {
  return BASE.get(word) ?? word;
}

/** Every written form sharing `word`'s base, itself excluded ("go" -> went, gone; "went" -> go, gone). */
export function otherForms(word: string): readonly string[] {
  const base = baseForm(word);
  const forms = FORMS[base];
  if (!forms) return [];
  return [base, ...forms].filter((f) => f !== word);
}
