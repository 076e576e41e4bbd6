/**
 * Role and channel names for kept messages' text, from discord.js's caches (filled by GUILD_CREATE
 * and kept current by the role and channel events of the Guilds intent). Never a REST call: a name
 * missing from the cache leaves the mention as Discord wrote it, which costs a search nothing.
 */
import type { Client } from "discord.js";
import type { Names } from "./message.ts";

export function clientNames(client: Client): Names {
  return {
    role: (id) => {
      for (const guild of client.guilds.cache.values()) {
        const role = guild.roles.cache.get(id);
        if (role) return role.name;
      }
      return undefined;
    },
    channel: (id) => {
      const channel = client.channels.cache.get(id);
      return channel && "name" in channel && typeof channel.name === "string" ? channel.name : undefined;
    },
  };
}
