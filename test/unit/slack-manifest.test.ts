/** slack/manifest.yml declares exactly the scopes and events the adapter uses, and is a valid manifest. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { BOT_EVENTS, BOT_SCOPES, METHOD_SCOPES } from "../../src/platforms/slack/scopes.ts";
import { SLASH_COMMAND } from "../../src/platforms/slack/commands/slash.ts";
import { SLACK_EVENTS_PATH } from "../../src/platforms/slack/adapter.ts";
import { WHY_CALLBACK_ID } from "../../src/platforms/slack/commands/why-shortcut.ts";

const ManifestSchema = z.object({
  _metadata: z.object({ major_version: z.number(), minor_version: z.number() }).optional(),
  display_information: z.object({ name: z.string().min(1).max(35), description: z.string().max(140).optional(), long_description: z.string().min(175).max(4000).optional() }),
  features: z.object({
    app_home: z.object({ messages_tab_enabled: z.boolean(), messages_tab_read_only_enabled: z.boolean() }).loose(),
    bot_user: z.object({ display_name: z.string().min(1).max(80), always_online: z.boolean().optional() }),
    shortcuts: z.array(z.object({ name: z.string().min(1).max(24), type: z.enum(["message", "global"]), callback_id: z.string().min(1).max(255), description: z.string().min(1).max(150) })),
    slash_commands: z.array(z.object({ command: z.string().startsWith("/"), description: z.string().min(1).max(2000), usage_hint: z.string().optional(), url: z.string().optional(), should_escape: z.boolean().optional() })),
  }),
  oauth_config: z.object({ scopes: z.object({ bot: z.array(z.string()) }) }),
  settings: z.object({
    event_subscriptions: z.object({ bot_events: z.array(z.string()), request_url: z.string().optional() }),
    interactivity: z.object({ is_enabled: z.boolean() }).loose(),
    socket_mode_enabled: z.boolean(),
    org_deploy_enabled: z.boolean().optional(),
    token_rotation_enabled: z.boolean().optional(),
  }),
});

const manifest = ManifestSchema.parse(parse(readFileSync(fileURLToPath(new URL("../../slack/manifest.yml", import.meta.url)), "utf8")));

/** docs/slack.md's changes for HTTP mode: the YAML block under its "HTTP mode instead of Socket Mode" heading. */
const HttpChangesSchema = z.object({
  settings: z.object({
    socket_mode_enabled: z.literal(false),
    event_subscriptions: z.object({ request_url: z.url() }).loose(),
    interactivity: z.object({ is_enabled: z.boolean(), request_url: z.url() }),
  }),
  features: z.object({ slash_commands: z.array(z.object({ command: z.string(), url: z.url() }).loose()) }),
});
const docs = readFileSync(fileURLToPath(new URL("../../docs/slack.md", import.meta.url)), "utf8");
const httpBlock = /### HTTP mode instead of Socket Mode[\s\S]*?```yaml\n([\s\S]*?)```/.exec(docs)?.[1] ?? "";

describe("slack/manifest.yml", () => {
  it("declares exactly the bot scopes the code uses", () => {
    expect([...manifest.oauth_config.scopes.bot].sort()).toEqual(Object.keys(BOT_SCOPES).sort());
    for (const scopes of Object.values(METHOD_SCOPES)) for (const s of scopes ?? []) expect(manifest.oauth_config.scopes.bot).toContain(s);
  });

  it("subscribes to exactly the events the adapter handles", () => {
    expect([...manifest.settings.event_subscriptions.bot_events].sort()).toEqual([...BOT_EVENTS].sort());
  });

  it("has the /cairn command, Socket Mode, a bot user and a DM-able messages tab", () => {
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual([SLASH_COMMAND]);
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.features.app_home).toMatchObject({ messages_tab_enabled: true, messages_tab_read_only_enabled: false });
    expect(manifest.features.bot_user.display_name).toBe("cairn");
  });

  it("has the Why this answer? message shortcut, on the callback id the adapter listens for", () => {
    expect(manifest.features.shortcuts).toEqual([expect.objectContaining({ name: "Why this answer?", type: "message", callback_id: WHY_CALLBACK_ID })]);
  });

  it("has interactivity on for the feedback buttons, and in HTTP mode every request URL on the adapter's one path", () => {
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    const http = HttpChangesSchema.parse(parse(httpBlock));
    expect(http.settings.interactivity.is_enabled).toBe(true);
    // Bolt's HTTP receiver takes events, slash commands and interactions on the same endpoint.
    const paths = [http.settings.event_subscriptions.request_url, http.settings.interactivity.request_url, ...http.features.slash_commands.map((c) => c.url)].map((u) => new URL(u).pathname);
    expect(paths).toEqual([SLACK_EVENTS_PATH, SLACK_EVENTS_PATH, SLACK_EVENTS_PATH]);
  });

  it("has the Home tab, its event, and the scopes users.conversations needs for it", () => {
    expect(manifest.features.app_home).toMatchObject({ home_tab_enabled: true });
    expect(manifest.settings.event_subscriptions.bot_events).toContain("app_home_opened");
    expect(METHOD_SCOPES["users.conversations"]).toEqual(["channels:read", "groups:read"]);
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(["channels:read", "groups:read"]));
    // Publishing the Home tab and opening modals need no scope, but are listed as methods used.
    expect(METHOD_SCOPES["views.publish"]).toBeNull();
    expect(METHOD_SCOPES["views.open"]).toBeNull();
  });

  it("has what channel knowledge needs: member events, and the scopes of conversations.history, .replies, .members and .info", () => {
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(expect.arrayContaining(["member_joined_channel", "member_left_channel", "message.channels", "message.groups"]));
    expect(METHOD_SCOPES["conversations.members"]).toEqual(["channels:read", "groups:read"]);
    // A group DM is recognised (and refused) only with mpim:read.
    expect(METHOD_SCOPES["conversations.info"]).toEqual(["channels:read", "groups:read", "mpim:read"]);
    for (const method of ["conversations.history", "conversations.replies"]) expect(METHOD_SCOPES[method]).toEqual(expect.arrayContaining(["channels:history", "groups:history"]));
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(["channels:history", "groups:history", "channels:read", "groups:read", "mpim:read"]));
  });

  it("needs no request URLs in Socket Mode", () => {
    expect(manifest.settings.event_subscriptions.request_url).toBeUndefined();
    expect(manifest.features.slash_commands.every((c) => c.url === undefined)).toBe(true);
  });
});
