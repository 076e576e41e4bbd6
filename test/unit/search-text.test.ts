/** The pure parts of history search: text analysis, query analysis, ranking. */
import { describe, expect, it } from "vitest";
import { analyzeQuery, dateMatch, parseDates, saysWhen } from "../../src/history/query.ts";
import { DEFAULT_RANKING, rank, type RankDoc } from "../../src/history/rank.ts";
import { docKeys, makeSnippet, tokenize } from "../../src/history/text.ts";

describe("text analysis", () => {
  it("stems Latin words and splits CJK runs into bigrams", () => {
    expect(tokenize("Deploying the payments").map((t) => t.key)).toEqual(["deploi", "the", "payment"]);
    expect(tokenize("部署服务 ok").map((t) => t.key)).toEqual(["部署", "署服", "服务", "ok"]);
    expect(tokenize("字").map((t) => t.key)).toEqual(["字"]);
    expect(docKeys("What did we deploy?")).toEqual(["deploi"]);
    expect(tokenize("Café").map((t) => t.word)).toEqual(["cafe"]);
  });

  it("highlights matched words (and CJK spans) in a snippet around the densest match", () => {
    expect(makeSnippet("deploying the payments service", new Set(["deploi", "payment"]))).toBe("«deploying» the «payments» service");
    const long = `${"filler ".repeat(40)}the zebrafish report ${"tail ".repeat(40)}`;
    const s = makeSnippet(long, new Set(["zebrafish"]));
    expect(s).toMatch(/^….*«zebrafish».*…$/);
    expect(makeSnippet("支付服务部署到新加坡", new Set(["部署", "署到"]))).toBe("支付服务«部署到»新加坡");
    // Upper case, accents and astral characters around words: the in-place scan reads them as tokenize() does.
    expect(makeSnippet("Deployed the Café 😀 Payments ok", new Set(["deploi", "cafe", "payment"]))).toBe("«Deployed» the «Café» 😀 «Payments» ok");
  });
});

describe("query analysis", () => {
  it("keeps topic words, names and CJK grams; only stop words left means search them anyway", () => {
    const q = analyzeQuery("What did Alice say about the deploys?");
    expect([...new Set(q.terms.map((t) => t.key))]).toEqual(["alic", "sai", "deploi"]);
    // "said" is searched for too: the database does not join it to "say".
    expect(q.terms.map((t) => t.word)).toEqual(["alice", "say", "deploys", "said"]);
    expect(q.nameWords).toContain("alice");
    expect(analyzeQuery("the who").terms.map((t) => t.word)).toEqual(["the", "who"]);
    expect(analyzeQuery("会议时间").grams).toEqual(["会议", "议时", "时间"]);
    expect(analyzeQuery(`"foo" OR bar*) NEAR(`).terms.map((t) => t.word)).toEqual(["foo", "bar", "near"]);
  });

  it("reads dates written out, and not the verb 'may'", () => {
    expect(parseDates("what happened on 13 October 2023?")).toEqual([{ month: 9, day: 13, year: 2023 }]);
    expect(parseDates("October 13, 2023")).toEqual([{ month: 9, day: 13, year: 2023 }]);
    expect(parseDates("what did we ship in June")).toEqual([{ month: 5, day: null, year: null }]);
    expect(parseDates("deploys in May 2024")).toEqual([{ month: 4, day: null, year: 2024 }]);
    expect(parseDates("2024-03-05 incident")).toEqual([{ month: 2, day: 5, year: 2024 }]);
    expect(parseDates("you may want this")).toEqual([]);
    expect(dateMatch(new Date(Date.UTC(2023, 9, 14)), [{ month: 9, day: 13, year: 2023 }])).toBe(1.25);
    expect(dateMatch(new Date(Date.UTC(2023, 8, 13)), [{ month: 9, day: 13, year: 2023 }])).toBe(0);
  });

  it("reads ranges of days and a year on its own, not any four digits", () => {
    const days = (q: string) => parseDates(q).map((d) => `${d.year}-${d.month}-${d.day}`).sort();
    expect(days("where was the team between August 11 and August 15 2023?")).toEqual(["2023-7-11", "2023-7-12", "2023-7-13", "2023-7-14", "2023-7-15"]);
    expect(days("outages 3-5 March")).toEqual(["null-2-3", "null-2-4", "null-2-5"]);
    expect(parseDates("what did we ship in 2023?")).toEqual([{ month: null, day: null, year: 2023 }]);
    expect(parseDates("the 2048 requests that failed")).toEqual([]);
    // "in June 2023" names the year already: no second, vaguer hint.
    expect(parseDates("in June 2023")).toEqual([{ month: 5, day: null, year: 2023 }]);
    // A whole year matches less than a month does.
    expect(dateMatch(new Date(Date.UTC(2023, 2, 1)), [{ month: null, day: null, year: 2023 }])).toBe(0.25);
    expect(dateMatch(new Date(Date.UTC(2024, 2, 1)), [{ month: null, day: null, year: 2023 }])).toBe(0);
  });

  it("knows a question about when, and a message that says when", () => {
    expect(analyzeQuery("When did we rotate the keys?").asksWhen).toBe(true);
    expect(analyzeQuery("which month was the migration").asksWhen).toBe(true);
    expect(analyzeQuery("how long ago did Bo join").asksWhen).toBe(true);
    expect(analyzeQuery("what did we decide about the keys").asksWhen).toBe(false);
    expect(analyzeQuery("ok, when is the freeze?").asksWhen).toBe(true);
    // "When" inside a clause is not a question about time.
    expect(analyzeQuery("what happens when the cache is full?").asksWhen).toBe(false);
    expect(saysWhen("rotated them yesterday")).toBe(true);
    expect(saysWhen("back from leave two weeks ago")).toBe(true);
    expect(saysWhen("the review is on Friday")).toBe(true);
    expect(saysWhen("rotated them on staging")).toBe(false);
  });
});

describe("rank", () => {
  const at = (min: number) => new Date(Date.UTC(2026, 0, 1, 9, min));
  const doc = (id: number, speaker: string, text: string, min = id): RankDoc => ({
    id,
    conversationId: "c1",
    speaker,
    authorId: speaker,
    sessionKey: "s1",
    createdAt: at(min),
    text,
    keys: docKeys(text),
  });
  const stats = { docs: 100, avgChars: 40, sessions: 10, df: new Map<string, number>() };

  it("lends a matching question's score to the other person's reply, not to a bystander's same-author message", () => {
    const question = doc(1, "ann", "where do the billing replicas run?");
    const reply = doc(2, "bo", "Frankfurt since March");
    const sameAuthor = doc(3, "bo", "lunch at noon");
    const ranked = rank({
      query: analyzeQuery("billing replicas"),
      matches: [question],
      neighbours: [
        { anchor: 1, offset: 1, doc: reply },
        { anchor: 1, offset: 2, doc: sameAuthor },
      ],
      stats,
      namedPeople: [],
      options: DEFAULT_RANKING,
    });
    // Bo's reply is in an exchange with Ann's question (different speakers): it comes back; the
    // message after it (two away) does too since Ann's question still differs in speaker.
    expect(ranked.map((r) => r.doc.id)).toContain(2);
    expect(ranked[0]!.doc.id).toBe(1);
    const noNeighbours = rank({ query: analyzeQuery("billing replicas"), matches: [question], neighbours: [{ anchor: 1, offset: 1, doc: reply }], stats, namedPeople: [], options: { ...DEFAULT_RANKING, window: 0 } });
    expect(noNeighbours.map((r) => r.doc.id)).toEqual([1]);
  });

  it("returns nothing for a message that only follows a same-author match", () => {
    const a = doc(1, "ann", "the zebrafish report is late");
    const b = doc(2, "ann", "nothing relevant here");
    const ranked = rank({ query: analyzeQuery("zebrafish"), matches: [a], neighbours: [{ anchor: 1, offset: 1, doc: b }], stats, namedPeople: [], options: DEFAULT_RANKING });
    expect(ranked.map((r) => r.doc.id)).toEqual([1]);
  });

  it("counts a message met twice (a candidate that is also a neighbour, or the neighbour of two anchors) once", () => {
    const question = doc(1, "ann", "where do the billing replicas run?");
    const reply = doc(2, "bo", "billing replicas run in Frankfurt");
    const q = analyzeQuery("billing replicas");
    const once = rank({ query: q, matches: [question, reply], neighbours: [{ anchor: 1, offset: 1, doc: reply }, { anchor: 2, offset: -1, doc: question }], stats, namedPeople: [], options: DEFAULT_RANKING });
    const twice = rank({
      query: q,
      matches: [question, reply],
      neighbours: [
        { anchor: 1, offset: 1, doc: { ...reply } },
        { anchor: 2, offset: -1, doc: { ...question } },
        { anchor: 1, offset: 1, doc: { ...reply } },
      ],
      stats,
      namedPeople: [],
      options: DEFAULT_RANKING,
    });
    expect(twice.map((r) => [r.doc.id, r.score])).toEqual(once.map((r) => [r.doc.id, r.score]));
    expect(once.map((r) => r.doc.id)).toEqual([2, 1]);
  });

  it("answers a question about when with the message that says when", () => {
    // The same words; the message that says when is the longer one, which BM25 alone ranks lower.
    const said = doc(1, "ann", "we rotated the keys yesterday evening");
    const other = doc(2, "bo", "we rotated the keys on staging");
    const q = analyzeQuery("when did we rotate the keys?");
    const ids = (when: number) => rank({ query: q, matches: [said, other], neighbours: [], stats, namedPeople: [], options: { ...DEFAULT_RANKING, when } }).map((r) => r.doc.id);
    expect(ids(DEFAULT_RANKING.when)).toEqual([1, 2]);
    expect(ids(0)).toEqual([2, 1]);
    // A question that does not ask when leaves the order to the words.
    expect(rank({ query: analyzeQuery("did we rotate the keys?"), matches: [said, other], neighbours: [], stats, namedPeople: [], options: DEFAULT_RANKING }).map((r) => r.doc.id)).toEqual([2, 1]);
  });

  it("lets a strong match lend its reply more than a weak match lends its own (lend curve)", () => {
    const strong = doc(1, "ann", "where do the billing replicas run?");
    const strongReply = doc(2, "bo", "Frankfurt since March");
    const weak = doc(10, "cy", "billing is slow?");
    const weakReply = doc(11, "di", "no idea");
    const q = analyzeQuery("billing replicas");
    const scores = (lendCurve: number) => {
      const ranked = rank({
        query: q,
        matches: [strong, weak],
        neighbours: [
          { anchor: 1, offset: 1, doc: strongReply },
          { anchor: 10, offset: 1, doc: weakReply },
        ],
        stats,
        namedPeople: [],
        options: { ...DEFAULT_RANKING, session: 0, lendCurve },
      });
      return new Map(ranked.map((r) => [r.doc.id, r.score]));
    };
    const proportional = scores(1);
    const curved = scores(DEFAULT_RANKING.lendCurve);
    // The best match lends as before; a weaker one lends less than in proportion to its score.
    expect(curved.get(2)).toBeCloseTo(proportional.get(2)!, 10);
    expect(curved.get(11)! / curved.get(2)!).toBeLessThan(proportional.get(11)! / proportional.get(2)!);
    expect(curved.get(11)!).toBeGreaterThan(0);
  });

  it("prefers the session that shares the conversation's other words; a word every session holds tells none apart", () => {
    const inSession = (d: RankDoc, sessionKey: string): RankDoc => ({ ...d, sessionKey });
    // Alike on the query's words; the newer (2) wins the tie without context. The other message of
    // each session comes in as a neighbour, as the search reads it.
    const payments = inSession(doc(1, "ann", "we decided the release goes out on Tuesdays"), "pay");
    const search = inSession(doc(2, "cy", "we decided the release goes out nightly"), "search");
    const cards = inSession(doc(3, "bo", "the card processor team agrees, and the payments api too"), "pay");
    const indexer = inSession(doc(4, "di", "nightly suits the indexer, and the payments api too"), "search");
    const neighbours = [cards, indexer].map((d, i) => ({ anchor: i + 1, offset: 2, doc: d }));
    const order = (said?: string, weight = DEFAULT_RANKING.context) =>
      rank({ query: analyzeQuery("decided release"), matches: [payments, search], neighbours, stats, namedPeople: [], options: { ...DEFAULT_RANKING, context: weight }, ...(said ? { context: docKeys(said) } : {}) })
        .filter((r) => r.matched)
        .map((r) => r.doc.id);
    expect(order()).toEqual([2, 1]);
    expect(order("the card processor is asking when their changes ship")).toEqual([1, 2]);
    // "payments api" is in both sessions: it decides nothing.
    expect(order("what about the payments api?")).toEqual([2, 1]);
    // The query's own words, or a weight of 0, change nothing.
    expect(order("decided release")).toEqual([2, 1]);
    expect(order("the card processor", 0)).toEqual([2, 1]);
  });

  it("boosts the named person's messages", () => {
    const a = doc(1, "ann", "deploy checklist in the wiki");
    const b = doc(2, "bo", "deploy checklist in the wiki");
    const q = analyzeQuery("deploy checklist");
    expect(rank({ query: q, matches: [a, b], neighbours: [], stats, namedPeople: ["ann"], options: DEFAULT_RANKING })[0]!.doc.id).toBe(1);
    expect(rank({ query: q, matches: [a, b], neighbours: [], stats, namedPeople: [], options: DEFAULT_RANKING })[0]!.doc.id).toBe(2);
  });
});

describe("irregular forms", () => {
  it("share a ranking key with their base word, so 'where did we go' finds 'we went'", () => {
    expect(docKeys("we went with Postgres")).toContain(docKeys("go")[0]);
    expect(docKeys("she bought the licence")).toEqual(docKeys("she buys the licence"));
    expect(docKeys("the children")).toEqual(docKeys("the child"));
    // Words that are common on their own are not folded.
    expect(docKeys("the left panel")).not.toContain(docKeys("leave")[0]);
  });

  it("search for the other forms in the database too, under the same key", () => {
    const q = analyzeQuery("where did Melanie go camping?");
    const go = q.terms.filter((t) => t.key === docKeys("go")[0]).map((t) => t.word);
    expect(go.sort()).toEqual(["go", "gone", "went"]);
  });
});
