/** Discord refuses a message over 2,000 characters. */
export const DISCORD_MESSAGE_LIMIT = 2000;
/**
 * A message taller than a screen has to be scrolled back to find its start; 40 lines is about one
 * desktop screen, and a lower cap would cut ordinary code blocks into many parts, each one more
 * call against the channel's 5-per-5-seconds send limit.
 */
export const DISCORD_MAX_LINES = 40;

/**
 * What Discord refuses beyond in a message's components (400 Invalid Form Body): rows of buttons,
 * buttons per row, a button's label, and a custom id, which is also all a click carries back.
 */
export const COMPONENT_LIMITS = { rows: 5, buttonsPerRow: 5, label: 80, customId: 100 } as const;

/** A text input in a modal: its value and its longest length; a modal's title; a label and its description. */
export const MODAL_LIMITS = { value: 4000, title: 45, label: 45, description: 100 } as const;
