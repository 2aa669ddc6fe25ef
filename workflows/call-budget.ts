import { proxyLocalActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { CallUsage } from '../domain/usage';
import type { CallBudget, CallHold } from './kernel';

const { modelPrice } = proxyLocalActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** Where one unit of a call's hold is kept: a thread's allowance, or the root's registry. */
export interface Holder {
  reserve(amount: number): Promise<void> | void;
  settle(reserved: number, used: number): void;
}

/** A model's prices at the worker's table, US dollars per million tokens: a token costs that many micro-dollars. */
type Price = Awaited<ReturnType<typeof modelPrice>>;

/**
 * SPEC S11.3 "reserve, then settle", in tokens and, in a subtree with a budget in dollars, in
 * micro-dollars at the worker's price table. The price of a call's model is asked of a worker once per
 * workflow run (a local activity), before the first call that needs it. A call refused by either budget
 * holds nothing of the other.
 */
export function callBudget(tokens: Holder, cost?: Holder): CallBudget {
  const prices = new Map<string, Promise<Price>>();
  const priceOf = (model: string | undefined): Promise<Price> => {
    const key = model ?? '';
    let price = prices.get(key);
    if (!price) {
      price = modelPrice(model === undefined ? {} : { model });
      // A failed lookup is asked again by the next call.
      price.catch(() => prices.delete(key));
      prices.set(key, price);
    }
    return price;
  };
  return {
    async reserve(call): Promise<CallHold> {
      const held = call.inputTokens + call.outputTokens;
      await tokens.reserve(held);
      if (!cost) return { tokens: held, microUsd: 0 };
      try {
        const price = await priceOf(call.model);
        const microUsd = Math.ceil(call.inputTokens * price.input + call.outputTokens * price.output);
        await cost.reserve(microUsd);
        return { tokens: held, microUsd };
      } catch (error) {
        tokens.settle(held, 0);
        throw error;
      }
    },
    settle(held: CallHold, used: CallUsage | undefined): void {
      tokens.settle(held.tokens, used ? used.inputTokens + used.outputTokens : 0);
      if (cost) cost.settle(held.microUsd, used ? Math.round(used.costUsd * 1e6) : 0);
    },
  };
}
