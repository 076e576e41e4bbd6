/**
 * What a week's tokens cost, estimated from list prices (USD per million tokens; cache reads at a
 * tenth of input, 5-minute cache writes at 1.25 times). An estimate only: batch discounts,
 * long-prompt surcharges and 1-hour cache writes are not counted, and a rate card may change. A
 * model not listed here gets no price, and the report shows its tokens alone.
 */

export interface Price {
  input: number;
  output: number;
  /** Prompt cache hits. */
  cacheRead: number;
  /** Prompt cache writes (5-minute). */
  cacheWrite: number;
}

/**
 * By model id prefix: the longest prefix a model id starts with wins (a dated id is its model's).
 * Only rate cards we could confirm; a model missing here (or priced differently for you) is set with
 * CAIRN_MODEL_PRICES, which is merged over this table (src/app/config.ts).
 */
export const PRICES: Readonly<Record<string, Price>> = {
  "claude-sonnet-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-opus-4-8": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
};

/** One model's tokens in the week. */
export interface TokenUse {
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export function priceOf(model: string, prices: Readonly<Record<string, Price>> = PRICES): Price | null {
  const key = Object.keys(prices)
    // A dated id ("claude-opus-4-5-20251101") or "-latest" is its model's; "claude-sonnet-5-5" is not "claude-sonnet-5"'s.
    .filter((k) => model === k || (model.startsWith(`${k}-`) && /^(?:\d{8}|latest)$/.test(model.slice(k.length + 1))))
    .sort((a, b) => b.length - a.length)[0];
  return key ? prices[key]! : null;
}

/** The estimated cost in USD, or null for a model without a listed price. */
export function estimateCost(use: TokenUse, prices: Readonly<Record<string, Price>> = PRICES): number | null {
  const p = priceOf(use.model, prices);
  if (!p) return null;
  return (use.input * p.input + use.output * p.output + use.cacheRead * p.cacheRead + use.cacheWrite * p.cacheWrite) / 1_000_000;
}

/** The built-in table with the operator's prices over it (CAIRN_MODEL_PRICES); cache prices default from input. */
export function withPrices(custom: Readonly<Record<string, { input: number; output: number; cacheRead?: number | undefined; cacheWrite?: number | undefined }>>): Record<string, Price> {
  const out: Record<string, Price> = { ...PRICES };
  for (const [model, p] of Object.entries(custom)) out[model] = { input: p.input, output: p.output, cacheRead: p.cacheRead ?? p.input * 0.1, cacheWrite: p.cacheWrite ?? p.input * 1.25 };
  return out;
}
