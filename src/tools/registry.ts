/**
 * Tools the model may call. Each is a zod schema (the JSON schema the model sees is derived from
 * it, so the two cannot drift) and a handler. Every failure becomes a tool_result the model can act
 * on: unknown tool, invalid arguments, or a refusal from the store; the turn goes on.
 */
import { z } from "zod";
import type Anthropic from "@anthropic-ai/sdk";
import type { MemoryTarget, ProvenanceSource, Scope } from "../ground/types.ts";
import { UserFacingError } from "../ground/errors.ts";
import { storableStrings } from "../ground/text.ts";
import type { ToolResult } from "../ops/metrics.ts";

export interface ToolContext {
  scope: Scope;
  /** The stored id of the user message that started this turn: the provenance of every write. */
  sourceMessageId: number | null;
  sessionId: string;
  speakerName: string;
  /** Who writes: "tool" (the default) in a turn, "review" in a background review; every write's provenance. */
  source?: ProvenanceSource;
  /** Why the writes happen, kept in their revisions (a review names itself, so a re-run can tell it wrote). */
  reason?: string;
  /** Told of every change a tool made (a review counts them against its cap and reports them). */
  onWrite?: (write: ToolWrite) => void;
  /** Told of what a tool read and showed the model (a turn's trace keeps the messages a search returned: why this answer?). */
  onRead?: (read: ToolRead) => void;
  /**
   * In a turn: what the speaker said just before, oldest first, the message being answered last.
   * A search ranks by it what its query finds (the topic a short query leaves out).
   */
  conversation?: readonly string[];
}

/** What a tool showed the model from storage: a search's query and the stored messages it returned, best first. */
export type ToolRead = { kind: "search"; query: string; messageIds: number[] };

/** One change a tool made; `pendingId` is set for a memory change held until a person confirms it, `proposalId` for a skill write kept for a teammate's approval. */
export type ToolWrite =
  | { kind: "memory"; action: "add" | "replace" | "remove"; target: MemoryTarget; entryKind: string; text: string; pendingId: string | null }
  | { kind: "skill"; action: string; name: string; proposalId?: string | null };

/** A refusal the model should read: its message says what to do next. */
export class ToolError extends UserFacingError {
  override name = "ToolError";
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  /** What a person sees while it runs ("searching history"). */
  progress?: string;
  input: S;
  run(input: z.infer<S>, ctx: ToolContext): Promise<string>;
}

export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
}

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const at = issue.path.length ? `'${issue.path.join(".")}'` : "the input";
      return `- ${at}: ${issue.message}`;
    })
    .join("\n");
}

/** Told of every call run through a registry (the metrics count them); unknown tools are named "unknown". */
export type ToolCallObserver = (tool: string, result: ToolResult) => void;

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  /** Derived once: the tool set is fixed, and the schemas sit in every request's cached prefix. */
  private cachedDefinitions: Anthropic.Tool[] | null = null;

  constructor(
    tools: readonly Tool[],
    private readonly onUnexpected: (err: unknown, tool: string) => void = () => {},
    private readonly onCall: ToolCallObserver = () => {},
  ) {
    for (const t of tools) this.tools.set(t.name, t);
  }

  progressLabel(name: string): string {
    return this.tools.get(name)?.progress ?? "working";
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The tool definitions sent to the model, in a stable order (they sit in the cached prefix). */
  definitions(): Anthropic.Tool[] {
    this.cachedDefinitions ??= [...this.tools.values()].map((t) => {
      const schema = z.toJSONSchema(t.input, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
      delete schema.$schema;
      return { name: t.name, description: t.description, input_schema: schema as Anthropic.Tool.InputSchema };
    });
    return this.cachedDefinitions;
  }

  async execute(name: string, input: unknown, ctx: ToolContext): Promise<ToolOutcome> {
    const tool = this.tools.get(name);
    if (!tool) {
      // The name is the model's invention: kept out of the metric's labels, which must stay few.
      this.onCall("unknown", "invalid");
      return { isError: true, content: `Unknown tool '${name}'. Available tools: ${this.names().join(", ")}.` };
    }
    // The model's strings may hold what no database keeps (NUL, half an emoji): made storable first.
    const parsed = tool.input.safeParse(storableStrings(input));
    if (!parsed.success) {
      this.onCall(name, "invalid");
      return {
        isError: true,
        content: `Invalid arguments for ${name}; nothing was done. Fix these and call again:\n${formatIssues(parsed.error)}`,
      };
    }
    try {
      const content = await tool.run(parsed.data, ctx);
      this.onCall(name, "ok");
      return { isError: false, content };
    } catch (err) {
      if (err instanceof UserFacingError) {
        this.onCall(name, "refused");
        return { isError: true, content: err.message };
      }
      this.onUnexpected(err, name);
      this.onCall(name, "failed");
      return { isError: true, content: `${name} failed because of an internal error; nothing was changed. Tell the user it did not work, or try something else.` };
    }
  }
}
