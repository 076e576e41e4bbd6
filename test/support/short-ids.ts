/**
 * Answers show ids short (src/ground/short-id.ts): a test that knows the ids it expects reads an
 * answer with each short form written out whole, so its assertions name the ids it made. A token
 * is written out only when it is 8+ characters and the start of exactly one of `ids`; so a test
 * that lists an id the answer must not show catches its short form too.
 */
export function expandIds(text: string, ids: readonly string[]): string {
  return text.replace(/\b[a-z0-9][\w.-]{7,}/g, (token) => {
    const whole = ids.filter((id) => id.startsWith(token));
    return whole.length === 1 ? whole[0]! : token;
  });
}

/**
 * Whether the answer's line that says `words` shows `id`: whole, or a short form (a backticked
 * prefix of 8+ characters). Short forms are unique among the ids one answer shows, not among all,
 * so a test asks by the line an item is on, not by searching the whole answer for a prefix.
 */
export function showsId(text: string, id: string, words: string): boolean {
  const line = text.split("\n").find((l) => l.includes(words));
  const shown = line ? [...line.matchAll(/`([a-z0-9]{8,})`/g)].map((m) => m[1]!) : [];
  return shown.some((s) => id.startsWith(s));
}
