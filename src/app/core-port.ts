/**
 * The port a platform adapter talks to (CorePort), bound to that adapter: what it delivers is made
 * storable once, here (ground/text.ts), names and ids included, before the core sees it.
 */
import type { CorePort, PlatformAdapter } from "../ground/adapter.ts";
import { storableStrings } from "../ground/text.ts";
import { countDelivery } from "../ops/core-metrics.ts";
import type { Core } from "./core.ts";

export function portFor(core: Core, adapter: PlatformAdapter): CorePort {
  return {
    receive: (inbound, target, opts) => countDelivery(core.metrics, core.delivery.receive(storableStrings(inbound), target, adapter, opts)),
    feedback: (event) => core.feedback(storableStrings(event)),
    endSession: (inbound, reason) => core.endSession(storableStrings(inbound), reason),
    answer: (inbound, call, target) => core.answer(storableStrings(inbound), { name: call.name, args: storableStrings(call.args) }, target, adapter),
    command: (inbound, name, args) => core.command(storableStrings(inbound), name, args && storableStrings(args)),
    view: (inbound, request) => core.view(storableStrings(inbound), storableStrings(request)),
    observe: (event) => core.observe(storableStrings(event)),
    claim: (key, windowMs) => core.claim(key, windowMs),
    journal: core.journal.lane(),
    log: core.log,
  };
}
