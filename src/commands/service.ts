/**
 * The command service: what a person asks cairn outside a turn. A command (`/cairn <name>`, a
 * button) is run with the access rules of messages and its answer shown through the delivery path
 * (rendered and chunked by the platform's adapter, a public answer recorded as deliveries); a view
 * is what the asker may see of cairn's memory. It is given the stores and services the commands
 * need (`CommandServices`), never the Core.
 */
import type { Logger } from "../ground/log.ts";
import type { Inbound } from "../ground/types.ts";
import type { CommandCall, CommandName, CommandReply } from "../ground/commands.ts";
import type { Answered, CommandTarget, PlatformAdapter } from "../ground/adapter.ts";
import type { TeamView, ViewRequest } from "../ground/view-model.ts";
import { checkAccess, type AccessPolicy } from "../admission/access.ts";
import type { DeliveryPath } from "../delivery/delivery.ts";
import { runCommandSafely } from "../delivery/command-answer.ts";
import { buildView, type ViewDeps } from "../views/build.ts";
import { runCommand, type CommandServices } from "./dispatch.ts";
import { prepareCorrection, type CorrectStep } from "./feedback.ts";
import { COMMAND_FAILED_REPLY } from "../ground/replies.ts";

export interface CommandServiceDeps {
  access: AccessPolicy;
  delivery: Pick<DeliveryPath, "answer" | "adapterOf" | "receive">;
  services: CommandServices & ViewDeps;
  /**
   * How `answer` runs a command: the port's own `command` (default: this service's), so whatever
   * wraps the port's commands sees the ones answered through the delivery path too.
   */
  run?: (inbound: Inbound, name: CommandName, args: readonly string[]) => Promise<CommandReply>;
  log: Logger;
}

export class CommandService {
  constructor(private readonly deps: CommandServiceDeps) {}

  /** `/cairn <name> <args>` on every platform; access rules apply as for messages. */
  async command(inbound: Inbound, name: CommandName, args: readonly string[] = []): Promise<CommandReply> {
    const access = checkAccess(this.deps.access, inbound);
    if (!access.ok && name !== "help") return { text: access.text, ephemeral: true };
    return runCommand(this.deps.services, inbound, name, args);
  }

  /**
   * A command asked on `via`'s platform, its answer shown through the delivery path
   * (delivery/command-answer.ts). A command that throws is answered with the one apology, privately.
   */
  async answer(inbound: Inbound, call: CommandCall, target: CommandTarget, via?: PlatformAdapter): Promise<Answered> {
    const adapter = via ?? this.deps.delivery.adapterOf(inbound.platform);
    if (!adapter) throw new Error(`no ${inbound.platform} adapter is attached`);
    if (call.name === "correct") return this.correct(inbound, call.args.join(" "), target, adapter);
    const run = this.deps.run ?? ((i: Inbound, n: CommandName, a: readonly string[]) => this.command(i, n, a));
    const reply = await runCommandSafely(() => run(inbound, call.name, call.args), this.deps.log.child({ platform: inbound.platform, command: call.name }));
    return this.deps.delivery.answer(adapter, inbound, reply.text, reply.ephemeral, target);
  }

  /**
   * `/correct <text>` (commands/feedback.ts): the correction opened for the last answer, then the
   * text sent as the person's message through the delivery path, posted where the conversation's
   * answers go (the adapter's place for it), so the turn answers it with the correction applied and
   * its delivery queues the lesson. A correction no turn claimed (refused, limited, a duplicate) is
   * taken back, so the person's next message is not read as it.
   */
  private async correct(inbound: Inbound, text: string, target: CommandTarget, adapter: PlatformAdapter): Promise<Answered> {
    const { services, delivery } = this.deps;
    const log = this.deps.log.child({ platform: inbound.platform, command: "correct" });
    const access = checkAccess(this.deps.access, inbound);
    let step: CorrectStep;
    try {
      step = access.ok ? await prepareCorrection(services, inbound, await services.history.resolve(inbound), text) : { kind: "reply", reply: { text: access.text, ephemeral: true } };
    } catch (err) {
      log.error({ err }, "command failed");
      step = { kind: "reply", reply: { text: COMMAND_FAILED_REPLY, ephemeral: true } };
    }
    if (step.kind === "reply") return delivery.answer(adapter, inbound, step.reply.text, step.reply.ephemeral, target);
    const dm = inbound.channel.isDm;
    try {
      const where = await adapter.open(dm ? { kind: "dm", workspace: inbound.workspace.externalId, person: inbound.author.externalId } : { kind: "channel", workspace: inbound.workspace.externalId, channel: inbound.channel.externalId, threadId: inbound.threadId });
      const received = await delivery.receive(step.inbound, where, adapter);
      log.info({ correction: step.correctionId, received: received.kind }, "correction answered");
      return received.kind === "replied" ? { visibility: "public", messageId: received.replyMessageId, posted: received.posted, failed: received.failed } : { visibility: "public", messageId: null, posted: [], failed: true };
    } catch (err) {
      // The platform would not give the conversation's place (a DM it could not open): said privately.
      log.error({ err }, "could not answer a correction");
      return delivery.answer(adapter, inbound, COMMAND_FAILED_REPLY, true, target);
    } finally {
      // Claimed by the turn: no longer open, so nothing is taken back.
      await services.learning.withdrawCorrection(step.correctionId);
    }
  }

  /** What `inbound`'s author may see of cairn's memory, as a view with buttons; someone refused gets an empty view. */
  async view(inbound: Inbound, request: ViewRequest): Promise<TeamView> {
    if (!checkAccess(this.deps.access, inbound).ok) return { pane: request.pane, admin: false, sections: [] };
    return buildView(this.deps.services, inbound, request);
  }
}
