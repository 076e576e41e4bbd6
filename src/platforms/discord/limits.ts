/** Discord refuses a message over 2,000 characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;
/**
 * A message taller than a screen has to be scrolled back to find its start; 40 lines is about one
 * desktop screen, and a lower cap would cut ordinary code blocks into many parts, each one more
 * call against the channel's 5-per-5-seconds send limit.
 */
export const DISCORD_MAX_LINES = 40;
