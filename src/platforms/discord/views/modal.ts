/**
 * A view button that takes text (an admin's Edit persona): Discord asks for the text in a modal
 * (one text input, with the current value to edit and the command's longest length), and its
 * submission runs the button's command with the text as the last argument, as if typed.
 */
import { ComponentType, TextInputStyle, type APIModalInteractionResponseCallbackData } from "discord.js";
import { z } from "zod";
import type { ViewButton } from "../../../ground/view-model.ts";
import { MODAL_LIMITS } from "../limits.ts";
import { clip } from "./message.ts";

/** The text input's custom id (the modal's own id carries the command). */
export const TEXT_FIELD = "text";

export type TextInput = NonNullable<ViewButton["input"]>;

/**
 * The modal, or null when Discord's text input cannot hold the current text (4,000 characters):
 * the person is then told to type the command. The longest length is the command's, raised to the
 * current text's should that be longer (a budget lowered since): Discord refuses a value longer
 * than the input's maximum, and the command says what is too long when it is submitted.
 */
export function inputModal(customId: string, input: TextInput): APIModalInteractionResponseCallbackData | null {
  if (input.initial.length > MODAL_LIMITS.value) return null;
  const maxLength = Math.min(MODAL_LIMITS.value, Math.max(1, input.maxLength, input.initial.length));
  return {
    custom_id: customId,
    title: clip(input.title, MODAL_LIMITS.title),
    components: [
      {
        type: ComponentType.Label,
        label: clip(input.label, MODAL_LIMITS.label),
        // A label Discord cuts is said in full under it.
        ...(input.label.length > MODAL_LIMITS.label ? { description: clip(input.label, MODAL_LIMITS.description) } : {}),
        component: {
          type: ComponentType.TextInput,
          custom_id: TEXT_FIELD,
          style: input.multiline ? TextInputStyle.Paragraph : TextInputStyle.Short,
          max_length: maxLength,
          required: true,
          ...(input.initial ? { value: input.initial } : {}),
        },
      },
    ],
  };
}

/** A submitted field as discord.js hands it over (from Discord's payload). */
const SubmittedFields = z.array(z.looseObject({ customId: z.string().max(100), value: z.unknown() }));
const Text = z.string().max(MODAL_LIMITS.value);

/** The typed text from a submission's fields, or null when it carries none (not cairn's modal). */
export function submittedText(fields: unknown): string | null {
  const parsed = SubmittedFields.safeParse(fields);
  if (!parsed.success) return null;
  const text = Text.safeParse(parsed.data.find((f) => f.customId === TEXT_FIELD)?.value);
  return text.success ? text.data : null;
}
