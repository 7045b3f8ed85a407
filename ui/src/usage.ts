// Tokens and estimated cost, as the chat shows them.
import type { Usage } from "./ipc";

const count = (n: number) => n.toLocaleString("en-US");

/** A cost in millionths of a dollar, as `≈ $0.0123` (small amounts keep four decimals). */
export function dollars(micro: number): string {
  const value = micro / 1_000_000;
  return `≈ $${value >= 1 ? value.toFixed(2) : value.toFixed(4)}`;
}

/**
 * A turn's or a chat's tokens and cost, in one line. `cost` is null when the model's price is
 * not known (undefined: say nothing of cost); `unpriced` model calls are left out of it.
 */
export function describeUsage(usage: Usage, cost: number | null | undefined, unpriced = 0): string {
  const parts = [`${count(usage.inputTokens)} in`, `${count(usage.outputTokens)} out`];
  if (usage.cacheReadTokens > 0) parts.push(`${count(usage.cacheReadTokens)} cache read`);
  if (usage.cacheWriteTokens > 0) parts.push(`${count(usage.cacheWriteTokens)} cache write`);
  let text = `${parts.join(" · ")} tokens`;
  if (cost !== null && cost !== undefined) {
    text += ` · ${dollars(cost)}`;
    if (unpriced > 0) text += ` (+ ${unpriced} model call${unpriced === 1 ? "" : "s"} of unknown price)`;
  } else if (cost === null) {
    text += " · cost unknown for this model";
  }
  return text;
}
