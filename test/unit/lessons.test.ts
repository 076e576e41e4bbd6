import { describe, expect, it } from "vitest";
import { relevantLessons } from "../../src/memory/lessons.ts";

const lesson = (text: string) => ({ text });
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
    const many = Array.from({ length: 8 }, (_, i) => lesson(`Rule ${i}: the flaky suite is quarantined ${i}`));
    const picked = relevantLessons([...many, ...lessons, ...lessons], "why is the flaky suite quarantined?");
    expect(picked).toHaveLength(3);
    expect(texts(picked)).toEqual(["Rule 7: the flaky suite is quarantined 7", "Rule 6: the flaky suite is quarantined 6", "Rule 5: the flaky suite is quarantined 5"]);
  });

  it("finds lessons in Chinese by shared characters", () => {
    const zh = [lesson("部署到预发布环境之前需要在运维频道开工单。"), lesson("账单服务由支付团队负责。")];
    expect(texts(relevantLessons(zh, "谁负责账单服务？"))).toEqual(["账单服务由支付团队负责。"]);
  });
});
