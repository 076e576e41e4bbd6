/**
 * The typing indicator while cairn works. Discord shows "cairn is typing…" for about 10 seconds
 * per request, or until cairn posts; it is refreshed every ~8 s so it does not flicker off during a
 * long turn. A refresh is skipped while the previous one is still in flight (a rate-limited typing
 * call would otherwise land after the reply and show cairn typing again for 10 s).
 */
export interface TypingTarget {
  sendTyping(): Promise<void>;
}

export const TYPING_INTERVAL_MS = 8_000;

export interface Typing {
  stop(): void;
}

export function startTyping(channel: TypingTarget, intervalMs: number, onError: (err: unknown) => void): Typing {
  let stopped = false;
  let pending = false;
  const tick = (): void => {
    if (stopped || pending) return;
    pending = true;
    channel
      .sendTyping()
      // A failed indicator (no permission, rate limit) never holds up the answer.
      .catch(onError)
      .finally(() => {
        pending = false;
      });
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  // The interval must not keep a process alive that is otherwise shutting down.
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
