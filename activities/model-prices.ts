import { z } from 'zod';
import { KitError, parseInput } from '../domain/errors';
import type { CallUsage } from '../domain/usage';

/** US dollars per million tokens, input and output, of one model. */
const ModelPrice = z
  .object({
    input: z.number().min(0).max(1e6),
    output: z.number().min(0).max(1e6),
  })
  .strict();
type ModelPrice = z.infer<typeof ModelPrice>;

/**
 * SPEC S11.3: the worker's price table, `AGENTS_KIT_MODEL_PRICES`: a JSON object from a model (as the
 * ledger names it, `provider:model`, or the bare model id) to its prices in US dollars per million
 * tokens, e.g. `{"openai:gpt-4.1-mini": {"input": 0.4, "output": 1.6}}`. A model it does not list costs 0.
 */
export const ModelPrices = z.record(z.string().min(1).max(200), ModelPrice);
export type ModelPrices = z.infer<typeof ModelPrices>;

/** Reads `AGENTS_KIT_MODEL_PRICES`; a Protocol KitError naming the variable when it is not a price table. */
export function loadModelPrices(environment: Record<string, string | undefined> = process.env): ModelPrices {
  const raw = environment.AGENTS_KIT_MODEL_PRICES;
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw KitError.protocol(
      `AGENTS_KIT_MODEL_PRICES is not JSON (${error instanceof Error ? error.message : String(error)}): expected {"provider:model": {"input": 0.4, "output": 1.6}} in US dollars per million tokens`,
      { fields: ['AGENTS_KIT_MODEL_PRICES'] },
    );
  }
  return parseInput(ModelPrices, parsed, 'AGENTS_KIT_MODEL_PRICES');
}

/** A model's prices (`provider:model` first, then the bare id); 0 and 0 when the table has none. */
export function priceOf(prices: ModelPrices, model: { qualified: string; id: string }): ModelPrice {
  return prices[model.qualified] ?? prices[model.id] ?? { input: 0, output: 0 };
}

/** What a call cost: its tokens at the model's prices (`provider:model` first, then the bare id). */
export function costOf(
  prices: ModelPrices,
  model: { qualified: string; id: string },
  usage: Omit<CallUsage, 'costUsd'>,
): number {
  const price = priceOf(prices, model);
  const cost = (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1e6;
  return Math.round(cost * 1e9) / 1e9;
}
