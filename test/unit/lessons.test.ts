import { describe, expect, it } from "vitest";
import { relevantLessons } from "../../src/lessons/recall.ts";

const lesson = (text: string, confidence?: number) => (confidence === undefined ? { text } : { text, confidence });
const texts = (xs: { text: string }[]) => xs.map((x) => x.text);

describe("relevantLessons", () => {
  const lessons = [
    lesson("Deploys to staging need a ticket in #ops first."),
    lesson("The billing service is owned by the payments team."),
    lesson("Release notes go in the wiki, not in Slack."),
    lesson("Deploys to production only happen on Tuesdays."),
    lesson("Deploys of the mobile app go through the store review."),
  ];

  it("shows the lessons that share the message's distinctive words", () => {
    expect(texts(relevantLessons(lessons, "who owns billing?"))).toEqual(["The billing service is owned by the payments team."]);
    expect(texts(relevantLessons(lessons, "can I deploy to staging now?"))).toEqual(["Deploys to staging need a ticket in #ops first."]);
  });

  it("shows nothing for a message no lesson is about", () => {
    expect(relevantLessons(lessons, "what time is the all-hands?")).toEqual([]);
    expect(relevantLessons(lessons, "the and of")).toEqual([]);
  });

  it("never picks a lesson for a word most of several lessons share", () => {
    // Three of five lessons are about deploys: "deploy" alone tells them apart from nothing.
    expect(relevantLessons(lessons, "deploy")).toEqual([]);
  });

  it("with few lessons, any shared word counts", () => {
    expect(texts(relevantLessons([lesson("Deploys need a ticket in #ops.")], "how do I deploy?"))).toEqual(["Deploys need a ticket in #ops."]);
  });

  it("shows at most three, best first, the newer on a tie", () => {
    const suites = ["api", "web", "ios", "android", "search"].map((s) => lesson(`The ${s} suite is quarantined until it passes`));
    const picked = relevantLessons([...suites, ...lessons], "are the api, web, ios, android and search suites quarantined?");
    expect(texts(picked)).toEqual(["The search suite is quarantined until it passes", "The android suite is quarantined until it passes", "The ios suite is quarantined until it passes"]);
  });

  it("reads a follow-up with the person's earlier messages: their topic ranks, but never brings a lesson in alone", () => {
    // "deploy" alone is common to three lessons; which deploy is meant is in the earlier message.
    const earlier = ["we need to ship the mobile app build this week"];
    expect(relevantLessons(lessons, "how do deploys work?")).toEqual([]);
    expect(texts(relevantLessons(lessons, "how do deploys work?", undefined, earlier))).toEqual(["Deploys of the mobile app go through the store review."]);
    // The message must touch a lesson itself: the earlier topic alone shows nothing.
    expect(relevantLessons(lessons, "what time is the all-hands?", undefined, earlier)).toEqual([]);
    // The message's own words outrank the context's.
    expect(texts(relevantLessons(lessons, "and the ones to staging?", undefined, earlier))).toEqual(["Deploys to staging need a ticket in #ops first."]);
  });

  it("finds lessons in Chinese by shared characters", () => {
    const zh = [lesson("部署到预发布环境之前需要在运维频道开工单。"), lesson("账单服务由支付团队负责。")];
    expect(texts(relevantLessons(zh, "谁负责账单服务？"))).toEqual(["账单服务由支付团队负责。"]);
  });

  // Conventions of one channel as a team writes them: they share words ("data", "customer", "support").
  const team = [
    lesson("Deploys to staging need a ticket in #ops first."),
    lesson("Test data goes in the sandbox project, never in the production database."),
    lesson("Customer data exports are handled by the privacy team and never sent by email."),
    lesson("Security issues are reported in #sec-incidents, not in the team channel."),
    lesson("New dependencies need a license check by legal before they are added."),
    lesson("On-call swaps go in #oncall with a PagerDuty override."),
    lesson("The support rotation changes on Mondays at 10am; swaps go in #support."),
    lesson("Customer emails about outages are reviewed by the support lead."),
    lesson("Load tests run against the perf environment, never against staging."),
  ];

  it("shows only the lesson a question is about, not the others sharing one of its words", () => {
    // "new" and "report" each match a lesson of their own; "test data" is what the question is about.
    expect(texts(relevantLessons(team, "where should I put test data for the new report?"))).toEqual([
      "Test data goes in the sandbox project, never in the production database.",
    ]);
    // "customer" is in two lessons, "data" in two: one lesson holds the question's words together.
    expect(texts(relevantLessons(team, "a customer asked us to email them all the data we hold on them"))).toEqual([
      "Customer data exports are handled by the privacy team and never sent by email.",
    ]);
    expect(texts(relevantLessons(team, "I need to swap my on-call shift next week"))).toEqual(["On-call swaps go in #oncall with a PagerDuty override."]);
  });

  it("leaves out a lesson whose shared words a better one already holds", () => {
    // Both mention support; the rotation says it twice in fewer words.
    expect(texts(relevantLessons(team, "who's on support this week?"))).toEqual(["The support rotation changes on Mondays at 10am; swaps go in #support."]);
  });

  it("shows no lesson with a question none is about, however many lessons share words", () => {
    for (const q of ["what's for lunch today?", "write a haiku about autumn", "what time is the all-hands?", "explain what a monad is"]) {
      expect(relevantLessons(team, q)).toEqual([]);
    }
  });

  it("weighs each lesson by its confidence", () => {
    const staging = "Deploys to staging need a ticket in #ops first.";
    const perf = "Load tests run against the perf environment, never against staging.";
    // Alike, the shorter lesson wins "staging"; trusted less, it gives way to the other.
    expect(texts(relevantLessons([lesson(staging), lesson(perf)], "staging?"))).toEqual([staging]);
    expect(texts(relevantLessons([lesson(staging, 0.5), lesson(perf, 1)], "staging?"))).toEqual([perf]);
    expect(texts(relevantLessons([lesson(staging, 1), lesson(perf, 0.5)], "staging?"))).toEqual([staging]);
  });

  it("never shows a lesson trusted less than 0.3", () => {
    const billing = "The billing service is owned by the payments team.";
    expect(texts(relevantLessons([lesson(billing, 0.29)], "who owns billing?"))).toEqual([]);
    expect(texts(relevantLessons([lesson(billing, 0.3)], "who owns billing?"))).toEqual([billing]);
    expect(texts(relevantLessons([lesson(billing, 0.1), ...lessons.slice(0, 1)], "who owns billing?"))).toEqual([]);
  });
});
