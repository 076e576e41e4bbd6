/**
 * A channel listened in from start-up (CAIRN_LISTEN_CHANNELS): `platform:workspace/channel`, e.g.
 * slack:T0123/C0456 or discord:<guild id>/<channel id>. config.ts checks the setting against it and
 * knowledge.ts reads it; it lives here so that channel knowledge needs nothing from the top.
 */
export const LISTEN_CHANNEL = /^(slack|discord):([^/\s]+)\/(\S+)$/;
