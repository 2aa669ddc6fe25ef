import { z } from 'zod';
import { matching } from './ids';

/**
 * SPEC S11.3: the usage ledger. What model calls used, as their providers reported it: input and output
 * tokens, and the cost the worker's price table gave them, per model. A thread keeps its own; the root
 * keeps the tree's, from the threads' reports. Both are carried through continue-as-new, so each is
 * bounded: at most {@link maxLedgerModels} models, the rest added up under {@link otherModels}.
 */
const maxTokens = 1e15;
/**
 * The most tokens one model call counts of each kind (input, output), whatever its provider reports:
 * far above any real call, and low enough that what a thread owes its budget after one call always fits
 * the operations that carry it (a provider reporting 10^12 made a thread's settlement be refused, and
 * the tree's budget kept room the ledger had long passed).
 */
export const maxCallTokens = 1e9;
/** A provider's token count as one call counts it: a whole number from 0 to {@link maxCallTokens}. */
export const callTokens = (reported: number | undefined): number =>
  Number.isFinite(reported) ? Math.min(maxCallTokens, Math.max(0, Math.floor(reported!))) : 0;
const maxCostUsd = 1e12;
const maxCalls = 1e12;
export const Usage = z
  .object({
    inputTokens: z.number().int().min(0).max(maxTokens),
    outputTokens: z.number().int().min(0).max(maxTokens),
    /** US dollars, from the worker's price table; 0 when it has no price for the model. */
    costUsd: z.number().min(0).max(maxCostUsd),
    calls: z.number().int().min(0).max(maxCalls),
  })
  .strict();

/** Dollars to 1e-9: sums of binary fractions otherwise drift in the last digits. */
const dollars = (value: number): number => Math.round(value * 1e9) / 1e9;
export type Usage = z.infer<typeof Usage>;

/** What one model call reported (the activity's answer carries it). */
export const CallUsage = Usage.omit({ calls: true });
export type CallUsage = z.infer<typeof CallUsage>;

export const maxLedgerModels = 32;
/** The entry the models past {@link maxLedgerModels} are added to. */
export const otherModels = '(other models)';
/** A model as the ledger names it (`provider:model`): printable ASCII, so a carried entry stays small. */
const modelName = matching(/^(?!__proto__$)[\x20-\x7e]{1,120}$/, 'expected 1-120 printable ASCII characters');

export const UsageLedger = z
  .record(modelName, Usage)
  .refine((ledger) => Object.keys(ledger).length <= maxLedgerModels + 1, 'too many models in a ledger');
export type UsageLedger = z.infer<typeof UsageLedger>;

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, costUsd: 0, calls: 0 });

/** Adds `usage` (of one call, or a ledger's entry) to `model`'s entry of `ledger`, in place. */
export function addUsage(ledger: UsageLedger, model: string, usage: CallUsage & { calls?: number }): void {
  const name = modelName.safeParse(model).success ? model : otherModels;
  const key =
    Object.hasOwn(ledger, name) ||
    Object.keys(ledger).filter((known) => known !== otherModels).length < maxLedgerModels
      ? name
      : otherModels;
  const entry = Object.hasOwn(ledger, key) ? ledger[key]! : (ledger[key] = emptyUsage());
  // Saturating: a ledger is carried through continue-as-new, and must parse there whatever it holds.
  entry.inputTokens = Math.min(maxTokens, entry.inputTokens + usage.inputTokens);
  entry.outputTokens = Math.min(maxTokens, entry.outputTokens + usage.outputTokens);
  entry.costUsd = Math.min(maxCostUsd, dollars(entry.costUsd + usage.costUsd));
  entry.calls = Math.min(maxCalls, entry.calls + (usage.calls ?? 1));
}

/** `from` added into `into`, in place. */
export function mergeLedger(into: UsageLedger, from: UsageLedger): void {
  for (const [model, usage] of Object.entries(from)) addUsage(into, model, usage);
}

/** All models of a ledger added up. */
export function totalUsage(ledger: UsageLedger): Usage {
  const total = emptyUsage();
  for (const usage of Object.values(ledger)) {
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.costUsd = dollars(total.costUsd + usage.costUsd);
    total.calls += usage.calls;
  }
  return total;
}

/** The ledger, or undefined when nothing was used (so carried state stays as it was without one). */
export const ledgerOrNothing = (ledger: UsageLedger): UsageLedger | undefined =>
  Object.keys(ledger).length > 0 ? ledger : undefined;

/** A short line for a workflow's details in the Web UI: `1,234 in / 567 out tokens · $0.0123`. */
export function usageLine(ledger: UsageLedger): string {
  const total = totalUsage(ledger);
  const cost = total.costUsd > 0 ? ` · $${total.costUsd.toFixed(4)}` : '';
  return `${grouped(total.inputTokens)} in / ${grouped(total.outputTokens)} out tokens${cost}`;
}

/** 1234567 as `1,234,567` (no Intl in workflow code). */
const grouped = (value: number): string => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * The tokens a model call is held to before it starts (SPEC S11.3 "reserve, then settle"): its maximum
 * output, which the provider is told, plus an estimate of its input from the prompt's bytes: two bytes a
 * token (English runs near four; byte-level tokenizers never pass one token a byte), and the tool
 * definitions the activity adds.
 */
export function callReservation(
  promptBytes: number,
  userTools: number,
  maxOutputTokens: number,
): { inputTokens: number; outputTokens: number } {
  const toolBytes = 4_000 + 300 * userTools;
  return { inputTokens: Math.ceil((promptBytes + toolBytes) / 2), outputTokens: maxOutputTokens };
}

/** What a model call may output when the kernel says nothing (`maxOutputTokens` of the model kernel). */
export const defaultMaxOutputTokens = 4_096;

/** A thread's ledger, and what it used since it last told its root (SPEC S11.3). */
export class ThreadUsage {
  readonly ledger: UsageLedger;
  private unreported: UsageLedger = {};

  constructor(carried?: UsageLedger) {
    this.ledger = carried ?? {};
  }

  record(model: string, usage: CallUsage): void {
    addUsage(this.ledger, model, usage);
    addUsage(this.unreported, model, usage);
  }

  /** What to tell the root in the next report (then forgotten), or undefined when nothing was used. */
  takeUnreported(): UsageLedger | undefined {
    const taken = ledgerOrNothing(this.unreported);
    this.unreported = {};
    return taken;
  }

  /** What continue-as-new carries (nothing when nothing was used). */
  get carried(): UsageLedger | undefined {
    return ledgerOrNothing(this.ledger);
  }

  /** ` · 1,234 in / 567 out tokens · $0.01` for the Web UI's details, or nothing. */
  get detail(): string {
    return Object.keys(this.ledger).length > 0 ? ` · ${usageLine(this.ledger)}` : '';
  }
}

/** The ledger's name for the tokens a scripted kernel's `reply.tokens` report (no model ran). */
export const scriptedKernelModel = 'agents-kit:scripted-kernel';
