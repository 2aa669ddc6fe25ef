import { z } from 'zod';

/** SPEC S11.3: budgets in US dollars, as grants and spawns give them and the root counts them. */

/** The largest budget in US dollars a grant or spawn may set (a billion). */
export const maxBudgetUsd = 1e9;
export const maxBudgetMicroUsd = maxBudgetUsd * 1e6;
/** A budget in US dollars, as a grant or a spawn gives it. */
export const BudgetUsd = z.number().min(0).max(maxBudgetUsd);
/** US dollars as whole micro-dollars, rounded down (a budget never grows by rounding). */
export const toMicroUsd = (usd: number): number => Math.floor(usd * 1e6 + 1e-6);
