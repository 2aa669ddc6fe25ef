// SPEC S11.3: the usage ledger's arithmetic and bounds, the price table, and the reservation a model
// call holds before it starts (in a thread's allowance and at the root).
import { costOf, loadModelPrices } from '../../activities/model-prices';
import { KitError } from '../../domain/errors';
import {
  addUsage,
  callReservation,
  maxLedgerModels,
  mergeLedger,
  otherModels,
  ThreadUsage,
  totalUsage,
  UsageLedger,
  usageLine,
} from '../../domain/usage';
import { microUsdUnit, TokenAllowance } from '../../workflows/token-allowance';

const call = (inputTokens: number, outputTokens: number, costUsd = 0) => ({
  inputTokens,
  outputTokens,
  costUsd,
});

test('a ledger adds calls per model, and its total is their sum', () => {
  const ledger: UsageLedger = {};
  addUsage(ledger, 'openai:a', call(10, 2, 0.1));
  addUsage(ledger, 'openai:a', call(5, 1, 0.2));
  addUsage(ledger, 'openai:b', call(1, 1));
  expect(ledger['openai:a']).toEqual({ inputTokens: 15, outputTokens: 3, costUsd: 0.3, calls: 2 });
  expect(totalUsage(ledger)).toEqual({ inputTokens: 16, outputTokens: 4, costUsd: 0.3, calls: 3 });
  const tree: UsageLedger = {};
  mergeLedger(tree, ledger);
  mergeLedger(tree, ledger);
  expect(totalUsage(tree)).toEqual({ inputTokens: 32, outputTokens: 8, costUsd: 0.6, calls: 6 });
  expect(usageLine(tree)).toBe('32 in / 8 out tokens · $0.6000');
});

test('a ledger stays bounded: models past the limit, odd names and prototype keys go to one entry; numbers saturate', () => {
  const ledger: UsageLedger = {};
  for (let n = 0; n < maxLedgerModels + 10; n++) addUsage(ledger, `model-${n}`, call(1, 1));
  addUsage(ledger, '\u0000bad', call(1, 0));
  addUsage(ledger, '__proto__', call(1, 0));
  addUsage(ledger, 'constructor', call(1, 0));
  expect(Object.keys(ledger)).toHaveLength(maxLedgerModels + 1);
  expect(ledger[otherModels]?.calls).toBe(13);
  expect(Object.getPrototypeOf(ledger)).toBe(Object.prototype);
  const huge: UsageLedger = {};
  for (let n = 0; n < 3; n++) addUsage(huge, 'm', { ...call(1e15, 1e15, 1e12), calls: 1e12 });
  // Whatever it holds, a carried ledger parses in the next run.
  expect(UsageLedger.safeParse(huge).success).toBe(true);
  expect(UsageLedger.safeParse(ledger).success).toBe(true);
});

test('a thread reports what it used since its last report, and carries its whole ledger', () => {
  const usage = new ThreadUsage();
  expect(usage.takeUnreported()).toBeUndefined();
  expect(usage.carried).toBeUndefined();
  usage.record('m', call(3, 4));
  expect(usage.takeUnreported()).toEqual({ m: { inputTokens: 3, outputTokens: 4, costUsd: 0, calls: 1 } });
  usage.record('m', call(1, 1));
  expect(usage.takeUnreported()?.m?.calls).toBe(1);
  expect(new ThreadUsage(usage.carried).ledger.m?.calls).toBe(2);
  expect(usage.detail).toBe(' · 4 in / 5 out tokens');
});

test("the price table: per million tokens, the provider's name first; bad tables name the variable", () => {
  const prices = loadModelPrices({
    AGENTS_KIT_MODEL_PRICES:
      '{"openai:gpt-x": {"input": 2, "output": 8}, "gpt-y": {"input": 1, "output": 1}}',
  });
  expect(costOf(prices, { qualified: 'openai:gpt-x', id: 'gpt-x' }, call(1_000_000, 500_000))).toBe(6);
  expect(costOf(prices, { qualified: 'other:gpt-y', id: 'gpt-y' }, call(10, 10))).toBe(0.00002);
  expect(costOf(prices, { qualified: 'other:z', id: 'z' }, call(10, 10))).toBe(0);
  expect(loadModelPrices({})).toEqual({});
  for (const bad of ['not json', '{"m": {"input": -1, "output": 1}}', '{"m": {"input": 1}}', '[1]']) {
    let error: unknown;
    try {
      loadModelPrices({ AGENTS_KIT_MODEL_PRICES: bad });
    } catch (thrown) {
      error = thrown;
    }
    expect(KitError.is(error) && error.kind).toBe('Protocol');
    expect((error as Error).message).toMatch(/AGENTS_KIT_MODEL_PRICES/);
  }
});

test("a call's reservation covers its maximum output and its input at two bytes a token, tool definitions included", () => {
  expect(callReservation(0, 0, 100)).toEqual({ inputTokens: 2_000, outputTokens: 100 });
  expect(callReservation(10_000, 2, 4_096)).toEqual({
    inputTokens: Math.ceil((10_000 + 4_000 + 600) / 2),
    outputTokens: 4_096,
  });
});

describe('a thread reserves a call from its allowance', () => {
  const grants: { tokens: number; owed: number; need?: number }[] = [];
  const allowance = (held: number, granting: (request: { need?: number }) => number) =>
    new TokenAllowance(
      async (request) => {
        grants.push(request);
        return { granted: granting(request) };
      },
      { allowance: held, owed: 0, unreported: 0 },
      () => undefined,
    );
  beforeEach(() => grants.splice(0));

  test('within what it holds: no request; settled, the rest is its again and the use is reported', async () => {
    const held = allowance(50_000, () => 0);
    await held.reserveCall(10_000);
    expect(held.state.allowance).toBe(40_000);
    held.settleCall(10_000, 1_200);
    expect(held.state).toMatchObject({ allowance: 48_800, owed: 0, unreported: 1_200 });
    expect(grants).toEqual([]);
  });

  test('short of it: asks for at least the rest; refused, nothing is held and QuotaExceeded stands', async () => {
    const granted = allowance(1_000, (request) => request.need ?? 0);
    await granted.reserveCall(5_000);
    expect(grants[0]).toMatchObject({ need: 4_000 });
    expect(granted.state.allowance).toBe(0);
    const refused = allowance(1_000, () => 500);
    await expect(refused.reserveCall(5_000)).rejects.toMatchObject({ kind: 'QuotaExceeded' });
    expect(refused.state.allowance).toBe(1_500);
  });

  test('call-sized: refills ask for four of the latest reservation, and start below two of them', async () => {
    const requests: { tokens: number; need?: number }[] = [];
    const sized = new TokenAllowance(
      async (request) => {
        requests.push(request);
        return { granted: request.tokens };
      },
      { allowance: 100_000, owed: 0, unreported: 0 },
      () => undefined,
      { callSized: true },
    );
    await sized.reserveCall(40_000);
    sized.settleCall(40_000, 1_000);
    // 99,000 left is more than two calls of 40,000: no refill yet.
    expect(requests).toEqual([]);
    await sized.reserveCall(60_000);
    sized.settleCall(60_000, 1_000);
    // 98,000 left is less than two of 60,000: a refill of four.
    expect(requests).toEqual([expect.objectContaining({ tokens: 240_000 })]);
    expect(sized.state.lastCall).toBe(60_000);
    // Without it, the fixed grant and its threshold (half of 20,000).
    const fixed = allowance(100_000, () => 20_000);
    await fixed.reserveCall(60_000);
    fixed.settleCall(60_000, 1_000);
    expect(grants).toEqual([]);
    await fixed.reserveCall(30_000);
    fixed.settleCall(30_000, 31_000);
    expect(grants).toEqual([]);
    await fixed.reserveCall(8_000);
    fixed.settleCall(8_000, 1_000);
    expect(grants).toEqual([expect.objectContaining({ tokens: 20_000 })]);
  });

  test('refused, a thread that gives back hands what it holds to the root (for threads still running)', async () => {
    const requests: { tokens: number; giveBack?: number; spent: number }[] = [];
    const tracked: Promise<void>[] = [];
    const giving = new TokenAllowance(
      async (request) => {
        requests.push(request);
        return { granted: 0 };
      },
      { allowance: 1_000, owed: 0, unreported: 300 },
      (work) => void tracked.push(work),
      { unit: microUsdUnit, givesBack: () => true },
    );
    await expect(giving.reserveCall(5_000)).rejects.toMatchObject({
      kind: 'QuotaExceeded',
      details: { limit: 'budgetUsd', value: 0.005 },
      message: expect.stringContaining('$0.001000 is left to this thread'),
    });
    await Promise.all(tracked);
    expect(requests.at(-1)).toEqual({ tokens: 0, owed: 0, spent: 0, giveBack: 1_000 });
    expect(giving.state).toMatchObject({ allowance: 0, unreported: 0 });
  });

  test('a call that used more than it held owes the excess (told the root at once when low); one that failed gives it all back', async () => {
    const held = allowance(10_000, () => 0);
    await held.reserveCall(2_000);
    held.settleCall(2_000, 2_500);
    // Below half a grant, the refill in the background reports what was spent and what is owed.
    expect(grants[0]).toMatchObject({ owed: 500, spent: 2_000 });
    expect(held.state).toMatchObject({ allowance: 8_000, owed: 0, unreported: 0 });
    const other = allowance(10_000, () => 0);
    await other.reserveCall(3_000);
    other.settleCall(3_000, 0);
    expect(other.state).toMatchObject({ allowance: 10_000, owed: 0, unreported: 0 });
  });
});
