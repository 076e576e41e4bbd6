/**
 * What each setting of the environment schema (config.ts) is for, and which group it is listed in.
 * The one source of docs/operations.md's settings table and of .env.example (`npm run docs:settings`
 * writes both; test/unit/settings-docs.test.ts fails when they drift). Typed against the schema, so
 * a setting added there without a note here does not compile. Defaults are not written here: they
 * are read from the schema itself; `absent` only says what an unset setting without one means.
 */
import type { configSchema } from "./config.ts";

export type SettingName = keyof typeof configSchema.shape;

export const SETTING_GROUPS = {
  model: "Model",
  learning: "Learning loop",
  upkeep: "Curator and freshness",
  storage: "Storage",
  memory: "Memory, sessions and turns",
  knowledge: "Channel knowledge",
  service: "Running as a service: recovery, stopping, the journal",
  ops: "Logs, health and metrics",
  console: "Console",
  slack: "Slack",
  discord: "Discord",
  schedules: "Reports and schedules",
  access: "Access, trust and safety",
} as const;

export type SettingGroup = keyof typeof SETTING_GROUPS;

export interface SettingNote {
  group: SettingGroup;
  /** What it does, one or two sentences of Markdown (backticks only: it is also a .env comment). */
  text: string;
  /** What unset means, when the schema has no default value (e.g. "CAIRN_MODEL"). */
  absent?: string;
  /** A value shown in .env.example instead of an empty one. */
  example?: string;
  /** Uncommented in .env.example: the one setting a first start needs. */
  required?: true;
}

export const SETTING_NOTES = {
  ANTHROPIC_API_KEY: { group: "model", required: true, absent: "(required)", text: "The Claude API key. Without it cairn exits with a message saying what to set." },
  ANTHROPIC_BASE_URL: { group: "model", absent: "Anthropic's API", text: "Any Anthropic-compatible endpoint (a proxy or gateway)." },
  CAIRN_MODEL: { group: "model", text: "The model that answers." },
  CAIRN_SUMMARY_MODEL: { group: "model", text: "The model that summarizes older turns (and, by default, screens shared writes and finds contradictions)." },
  CAIRN_MAX_TOKENS: { group: "model", text: "Longest answer, in tokens (256 to 64000)." },
  CAIRN_MODEL_TIMEOUT_MS: { group: "model", text: "Timeout of one attempt of a model call." },
  CAIRN_MODEL_MAX_ATTEMPTS: { group: "model", text: "Attempts per model call; 429, 529, 5xx and timeouts are retried with backoff (a `retry-after` is waited out, up to 60 s)." },
  CAIRN_CHECK_KEY: { group: "model", text: "`on`: one 1-token request at start-up; a refused key (401/403) stops start-up with one sentence, a network failure or 5xx only logs a warning. `off` skips it." },

  CAIRN_REVIEW_MODEL: { group: "learning", absent: "CAIRN_MODEL", text: "The model of the background review and lesson distillation (the review sends the conversation's own prompt, with only the memory and skill tools)." },
  CAIRN_REVIEW_EVERY_TURNS: { group: "learning", text: "A memory review every N person messages of a conversation (0 = off)." },
  CAIRN_SKILL_REVIEW_TOOL_CALLS: { group: "learning", text: "A skill review once the turns since the last one made this many tool calls (0 = off); one review when both are due." },
  CAIRN_REVIEW_MIN_TURNS: { group: "learning", text: "A memory review when a conversation ends (`/new`, or quiet CAIRN_REVIEW_IDLE_MINUTES) with at least this many person messages since its last review (0 = off)." },
  CAIRN_REVIEW_IDLE_MINUTES: { group: "learning", text: "Minutes of quiet after which a conversation counts as ended, for that review." },
  CAIRN_REVIEW_NOTICE: { group: "learning", text: "What the person is told after a review saved something: `off`, `brief` or `verbose`." },
  CAIRN_REVIEW_MAX_WRITES: { group: "learning", text: "Memory and skill writes one review may make." },
  CAIRN_CORRECTION_EMOJI: { group: "learning", text: "Reactions that mean \"wrong\": cairn asks in the thread what it should have done. Unicode or Slack names." },
  CAIRN_POSITIVE_EMOJI: { group: "learning", text: "Reactions that mean \"right\": counted for the reply and the skills it used. Unicode or Slack names." },
  CAIRN_RULE_APPROVALS: { group: "learning", text: "✅ from this many people (not the corrector; an admin counts for all) make a channel lesson a team rule." },
  CAIRN_CORRECTION_WINDOW_HOURS: { group: "learning", text: "How long cairn waits for the correction after asking, in hours." },
  CAIRN_JOB_CONCURRENCY: { group: "learning", text: "Background jobs (reviews, reactions, lessons, the curator) run at once by this process." },
  CAIRN_CONTRADICTIONS: { group: "learning", text: "`on`: an entry coming into force is checked against what cairn holds nearby (one summary-model call); the same author or an admin replaces the old text, otherwise both are marked for `/cairn keep new|old|both <id>`. `off`: no check." },

  CAIRN_CURATOR_STALE_DAYS: { group: "upkeep", text: "Skills cairn wrote on its own and nobody used this many days go stale (still usable)." },
  CAIRN_CURATOR_ARCHIVE_DAYS: { group: "upkeep", text: "Those skills are archived once unused this many days (more than CAIRN_CURATOR_STALE_DAYS). Nothing is deleted: `/cairn history`, `/cairn rollback`." },
  CAIRN_CURATOR_LESSON_DAYS: { group: "upkeep", text: "Lessons cairn wrote on its own and showed with no message this many days are archived." },
  CAIRN_VERIFY_DAYS: { group: "upkeep", text: "A shared fact, rule, lesson or team skill nobody confirmed this many days shows \"(last confirmed <date>)\" and is listed monthly (CAIRN_VERIFY_CRON) for `/cairn verify <id>`." },
  CAIRN_DECAY_DAYS: { group: "upkeep", text: "Lessons and rules of low confidence unused this many days are proposed for archiving (never archived without a person)." },
  CAIRN_APPROVAL_REMIND_HOURS: { group: "upkeep", text: "A proposal waiting longer than this is reminded once in its thread, and admins get a daily DM digest of what waits." },

  DATABASE_URL: { group: "storage", text: "`file:PATH` is a SQLite file (created, with its folder, on first start); `postgresql://USER:PASSWORD@HOST:PORT/DB` selects PostgreSQL. Migrations are applied at every start." },

  CAIRN_MEMORY_USER_CHARS: { group: "memory", text: "Character budget of a person's profile in the prompt." },
  CAIRN_MEMORY_CHANNEL_CHARS: { group: "memory", text: "Character budget of a channel's memory in the prompt." },
  CAIRN_MEMORY_TEAM_CHARS: { group: "memory", text: "Character budget of the team's memory in the prompt." },
  CAIRN_PERSONA_CHARS: { group: "memory", text: "Budget of the team persona (`/cairn persona set`, admins): how cairn speaks in a workspace and what it always does there." },
  CAIRN_SESSION_IDLE_MINUTES: { group: "memory", text: "A conversation's session ends after this many idle minutes; the next message starts a fresh one." },
  CAIRN_TOOL_ITERATIONS: { group: "memory", text: "Model calls allowed in one turn (the tool loop's budget)." },
  CAIRN_EMBEDDINGS_URL: { group: "memory", absent: "(off)", text: "An OpenAI-compatible embeddings API's base URL (hosted, or a local Ollama, vLLM, TEI or LM Studio), such as `https://host/v1`: cairn posts to `<url>/embeddings`. Unset: no embeddings, nothing changes. `npm run doctor` checks it." },
  CAIRN_EMBEDDINGS_MODEL: { group: "memory", absent: "(required with the URL)", text: "The embedding model to ask the endpoint for." },
  CAIRN_EMBEDDINGS_API_KEY: { group: "memory", absent: "(none sent)", text: "Sent as `Authorization: Bearer <key>` to the embeddings endpoint; local servers usually need none." },
  CAIRN_EMBEDDINGS_DIMENSIONS: { group: "memory", absent: "(the model's own)", text: "Vector length to ask for (models that can shorten their vectors); a vector of another length is an error the doctor names." },
  CAIRN_EMBEDDINGS_BATCH: { group: "memory", text: "Texts per request when embedding stored messages and memory in the background." },
  CAIRN_EMBEDDINGS_PER_MINUTE: { group: "memory", text: "Background embedding requests a minute at most (a search's query is not counted): keep under the endpoint's rate limit." },
  CAIRN_PROVIDER_DEADLINE_MS: { group: "memory", text: "How long a turn waits for memory providers' items (milliseconds); a provider later than this, or failing, is skipped for that turn and counted in `cairn_provider_calls_total`." },
  CAIRN_HISTORY_CHAR_LIMIT: { group: "memory", text: "When a session's history passes this many characters, older turns are summarized." },
  CAIRN_HISTORY_KEEP_MESSAGES: { group: "memory", text: "The newest messages kept verbatim when older turns are summarized." },
  CAIRN_MAX_CONCURRENCY: { group: "memory", text: "Conversations answered at once by this process (one conversation is always in order). A turn mostly waits on the model: lower it if your API tier is small (see Concurrency in docs/operations.md)." },

  CAIRN_LISTEN_BACKFILL_DAYS: { group: "knowledge", text: "How many days of history `/cairn listen on` reads back in a channel." },
  CAIRN_LISTEN_RETENTION_DAYS: { group: "knowledge", text: "How long kept channel messages stay (0: until deleted on the platform)." },
  CAIRN_LISTEN_MEMBERS_TTL_MINUTES: { group: "knowledge", text: "How long a Slack channel's member list is trusted before it is read again (member events change it at once)." },
  CAIRN_LISTEN_CHANNELS: { group: "knowledge", absent: "(none)", example: "slack:T0123/C0456,discord:123456789/987654321", text: "Channels listened in from start-up: `platform:workspace/channel`, comma-separated." },

  CAIRN_TURN_LEASE_MS: { group: "service", text: "A message is held under a lease of the process answering it, renewed every third of this; when a process dies, another (or the next start) answers its messages once the lease runs out." },
  CAIRN_RECOVER_MAX_AGE_MINUTES: { group: "service", text: "A lost message older than this is not answered late: the person is asked to send it again." },
  CAIRN_ORDER_WINDOW_MS: { group: "service", text: "Several replicas: a turn starts once its message is this old (1000 to 2000), so one sent just before it but delivered to another replica is answered first. One process: 0." },
  CAIRN_STOP_TIMEOUT_MS: { group: "service", text: "On SIGTERM, how long answers in flight may take before the rest are handed back to other replicas." },
  CAIRN_JOURNAL_DIR: { group: "service", absent: "journal/ beside the SQLite file, else ./data/journal", text: "Where each platform message is kept on local disk before it is acknowledged, until it is stored. One folder per replica, kept across restarts." },
  CAIRN_JOURNAL_MAX_BYTES: { group: "service", text: "The journal's size on disk at most; past it, events are not acknowledged (the platform delivers them again)." },
  CAIRN_JOURNAL_IN_FLIGHT: { group: "service", text: "Kept messages handed to turns at once; the rest wait on disk." },

  LOG_LEVEL: { group: "ops", text: "pino level: `fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. JSON lines on stderr; in the console chat, to `cairn.log` in the data folder, with warnings and errors pointed out in the terminal." },
  CAIRN_HEALTH_PORT: { group: "ops", absent: "(none)", example: "9464", text: "Serve `/healthz`, `/readyz` and `/metrics` on this port, in every mode (Slack's HTTP mode also serves them on PORT)." },
  CAIRN_HEALTH_HOST: { group: "ops", absent: "every interface", text: "The address CAIRN_HEALTH_PORT listens on (`127.0.0.1`: this machine only)." },

  CAIRN_CONSOLE_USER: { group: "console", absent: "your OS user name", text: "Who you are in the console chat (an admin there, whatever CAIRN_ADMINS says)." },

  SLACK_BOT_TOKEN: { group: "slack", absent: "(Slack off)", text: "The bot token (`xoxb-…`); with SLACK_APP_TOKEN or SLACK_SIGNING_SECRET, starts Slack." },
  SLACK_APP_TOKEN: { group: "slack", absent: "(none)", text: "App-level token (`xapp-…`, `connections:write`): Socket Mode, no public URL needed." },
  SLACK_SIGNING_SECRET: { group: "slack", absent: "(none)", text: "HTTP mode: verify Slack's requests to `/slack/events` on PORT." },
  SLACK_API_URL: { group: "slack", absent: "https://slack.com/api/", text: "Web API base (tests, proxies)." },
  PORT: { group: "slack", text: "Slack's HTTP mode listens here (`/slack/events`, and the health endpoints)." },

  DISCORD_TOKEN: { group: "discord", absent: "(Discord off)", text: "The bot token; with DISCORD_APPLICATION_ID, starts Discord." },
  DISCORD_APPLICATION_ID: { group: "discord", absent: "(none)", text: "The application id from the developer portal." },
  DISCORD_API_URL: { group: "discord", absent: "Discord's API", text: "REST base (tests, proxies); the gateway URL comes from its `/gateway/bot`." },
  DISCORD_GUILD_ID: { group: "discord", absent: "(none)", text: "`npm run discord:register` registers the commands in this server only." },

  CAIRN_REPORT_CHANNEL: { group: "schedules", absent: "(stored only)", text: "Where the weekly self-review and the monthly confirmations list are posted: `slack:C0123`, `discord:123456789` or `console`. Unset: `/cairn report` shows the latest (docs/report.md)." },
  CAIRN_CURATOR_CRON: { group: "schedules", text: "When the curator runs (node-cron: minute hour day-of-month month weekday; six fields put seconds first)." },
  CAIRN_REPORT_CRON: { group: "schedules", text: "When the weekly self-review runs." },
  CAIRN_MODEL_PRICES: { group: "schedules", absent: "(built-in list prices)", text: 'Model prices for the weekly report\'s cost estimate, USD per million tokens, as JSON: `{"claude-sonnet-5-5": {"input": 3, "output": 15}}` (cache reads default to a tenth of input, cache writes to 1.25 times). A model without a price shows its tokens only.' },
  CAIRN_VERIFY_CRON: { group: "schedules", text: "When the monthly list of shared memory due for confirmation is posted." },
  CAIRN_REMIND_CRON: { group: "schedules", text: "How often waiting proposals are looked at for reminders." },
  CAIRN_TIMEZONE: { group: "schedules", text: "The IANA zone the cron expressions are read in (`Europe/Paris`, `America/New_York`). Each slot runs once whatever the number of processes." },

  CAIRN_ADMINS: { group: "access", absent: "(none)", example: "slack:U0123,discord:123456789", text: "Admins: platform-prefixed ids (`slack:U0123`, `discord:1234`, `console:dana`). They pin, archive and roll back, run jobs, set the persona, listen in channels, name teachers, and get the daily digest. The console's person is an admin anyway." },
  CAIRN_TEAM_WRITES: { group: "access", text: "`approval`: a team write reaches only where it was said (the channel; from a DM, the person's profile) until a teammate's ✅ or `/cairn approve <id>`; `open`: every team write reaches the workspace at once." },
  CAIRN_TEACHERS: { group: "access", absent: "(none)", text: "Trusted teachers (platform-prefixed ids), whose team writes need no approval; admins never do. `/cairn teachers add` names more." },
  CAIRN_SCREEN: { group: "access", text: "`on`: every write others will see is also judged by a small model call: allowed, held until a teammate approves it, or refused; it holds when the screen cannot answer. `off`: the patterns only." },
  CAIRN_SCREEN_MODEL: { group: "access", absent: "CAIRN_SUMMARY_MODEL", text: "The screen's model." },
  CAIRN_ALLOWED_USERS: { group: "access", absent: "(everyone)", text: "Set (this or CAIRN_ALLOWED_ROLES): only these people (platform-prefixed ids) and admins may talk to cairn." },
  CAIRN_ALLOWED_CHANNELS: { group: "access", absent: "(every channel)", text: "Set: only in these channels (`slack:C0123`); DMs are not channels." },
  CAIRN_ALLOWED_ROLES: { group: "access", absent: "(everyone)", text: "Set: people holding one of these Discord roles (`discord:<role id>`) may talk to cairn too." },
  CAIRN_RATE_LIMIT_PER_HOUR: { group: "access", text: "Messages one person may send per hour (0 = no limit), counted in the database: shared by replicas, kept across restarts." },
  CAIRN_MAX_MESSAGE_CHARS: { group: "access", text: "The longest message read whole; the rest is left out and the person told." },
  CAIRN_ALLOW_MASS_MENTIONS: { group: "access", text: "Let replies ping a whole channel or group (Slack `<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^…>`; Discord `@everyone`, `@here`, roles). Off: anyone could ask cairn to repeat one." },
} satisfies Record<SettingName, SettingNote>;
