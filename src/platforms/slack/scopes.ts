/**
 * The Slack permissions this adapter needs, in one place: `slack/manifest.yml` must declare exactly
 * these (a unit test holds them together), and docs/slack.md explains each.
 */

/** Bot token scopes, with what needs them. */
export const BOT_SCOPES = {
  "app_mentions:read": "receive app_mention events in channels",
  "channels:history": "message.channels events (replies in followed threads; every message of a listened channel) and conversations.history / conversations.replies in public channels (a listened channel's backfill)",
  "groups:history": "message.groups events and conversations.history / conversations.replies in private channels",
  "im:history": "message.im events: direct messages to cairn; conversations.history to find a DM answer posted just before a crash",
  "im:write": "conversations.open: a person's DM, for a message cairn starts itself (a question, a reminder, a report)",
  "mpim:history": "conversations.replies in group DMs cairn is mentioned in",
  "chat:write": "chat.postMessage, chat.update (answers, status line, streamed drafts), chat.delete (drafts an answer did not need) and chat.postEphemeral",
  "reactions:read": "reaction_added / reaction_removed events: feedback on replies",
  "reactions:write": "reactions.add / reactions.remove: the 👀 while working",
  "users:read": "users.info: display names",
  "channels:read":
    "users.conversations: the public channels a person is in, whose lessons their Home tab shows; conversations.members / conversations.info and member_joined_channel / member_left_channel events: who may search a listened public channel",
  "groups:read": "users.conversations: the private channels a person shares with cairn, whose lessons their Home tab shows; conversations.members / conversations.info and member events in private channels",
  "mpim:read": "conversations.info on a group DM: `/cairn listen on` there is refused (cairn never listens in group DMs)",
  commands: "the /cairn slash command",
} as const;

/** Bot events the adapter subscribes to. */
export const BOT_EVENTS = [
  "app_mention",
  "message.im",
  "message.channels",
  "message.groups",
  "reaction_added",
  "reaction_removed",
  "app_home_opened",
  // Who may search a listened channel: changed at once when someone joins or leaves it.
  "member_joined_channel",
  "member_left_channel",
] as const;

/** Web API methods the adapter calls, and the bot scope each needs (null: none, or the app-level token). */
export const METHOD_SCOPES: Record<string, readonly (keyof typeof BOT_SCOPES)[] | null> = {
  "auth.test": null,
  "apps.connections.open": null,
  "chat.postMessage": ["chat:write"],
  "chat.update": ["chat:write"],
  "chat.delete": ["chat:write"],
  "chat.postEphemeral": ["chat:write"],
  "reactions.add": ["reactions:write"],
  "reactions.remove": ["reactions:write"],
  "conversations.open": ["im:write"],
  "conversations.replies": ["channels:history", "groups:history", "im:history", "mpim:history"],
  "conversations.history": ["channels:history", "groups:history", "im:history", "mpim:history"],
  "users.info": ["users:read"],
  "users.conversations": ["channels:read", "groups:read"],
  "conversations.members": ["channels:read", "groups:read"],
  "conversations.info": ["channels:read", "groups:read", "mpim:read"],
  // The Home tab and its modals need no scope (Slack: "No scopes required").
  "views.publish": null,
  "views.open": null,
};
