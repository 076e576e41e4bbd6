/**
 * Ids as people see them: a short prefix instead of a 25-character cuid. A cuid starts with its
 * creation time, so ids made in the same instant share their first characters: an answer shows each
 * id as the shortest prefix (at least SHORT_ID characters) that tells it apart from the others it
 * shows. A prefix shared with an id not shown is settled when it is typed (commands/short-id.ts asks
 * which one). Buttons keep carrying full ids.
 */

/** Characters of an id shown at least. */
export const SHORT_ID = 8;
/** Characters of an id a person must type at least for it to be looked up as a prefix. */
export const MIN_PREFIX = 6;
/** A cuid's length: a token this long is a whole id, never looked up as a prefix. */
export const FULL_ID = 25;

/** A generated id (a cuid) as opposed to a name, a number or a platform's id. */
export const looksLikeCuid = (s: string): boolean => /^c[a-z0-9]{24}$/.test(s);

/** The shortest prefix of `id`, at least `min` long, that no other id of `others` starts with. */
export function uniquePrefix(id: string, others: Iterable<string>, min = SHORT_ID): string {
  let n = Math.min(min, id.length);
  for (const other of others) {
    if (other === id) continue;
    while (n < id.length && other.startsWith(id.slice(0, n))) n++;
  }
  return id.slice(0, n);
}

/** How one answer shows the ids in it: each by its shortest prefix unique among `ids`. */
export function shortIds(ids: Iterable<string>): (id: string) => string {
  const all = [...new Set(ids)];
  const cache = new Map<string, string>();
  return (id) => {
    let s = cache.get(id);
    if (s === undefined) cache.set(id, (s = uniquePrefix(id, all)));
    return s;
  };
}

/** One id shown alone. */
export const shortId = (id: string): string => id.slice(0, SHORT_ID);
