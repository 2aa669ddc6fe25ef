// SPEC S11.4: the approval policy's decisions and bounds, without a server.
import fc from 'fast-check';
import {
  ApprovalPolicy,
  changedPolicy,
  decideApproval,
  initialApprovalPolicy,
  maxPolicyBytes,
  maxPolicyTools,
  rememberedPolicy,
  rememberRefusal,
  type ApprovalDecision,
} from '../../domain/approval-policy';
import { jsonBytes } from '../../domain/bytes';
import { ErrorKind, KitError } from '../../domain/errors';

const policyOf = (lists: Partial<Omit<ApprovalPolicy, 'version'>> = {}): ApprovalPolicy =>
  ApprovalPolicy.parse({ version: 3, neverAsk: [], alwaysAsk: [], remembered: [], ...lists });

const thrown = (act: () => unknown): KitError => {
  try {
    act();
  } catch (error) {
    if (error instanceof KitError) return error;
    throw error;
  }
  throw new Error('expected a KitError');
};

test('without a policy the tool decides; the kernel that does not know leaves it to the tool', () => {
  const policy = initialApprovalPolicy();
  expect(policy).toEqual({ version: 0, neverAsk: [], alwaysAsk: [], remembered: [] });
  expect(decideApproval(policy, 'publish', true)).toEqual({ ask: true, because: 'declared' });
  expect(decideApproval(policy, 'echo', false)).toEqual({ ask: false, because: 'not-needed' });
  expect(decideApproval(policy, 'echo', undefined)).toEqual({ ask: 'declared' });
});

test('never-ask runs a needsApproval tool; always-ask asks for a tool that does not declare it', () => {
  const policy = policyOf({ neverAsk: ['publish'], alwaysAsk: ['echo'] });
  expect(decideApproval(policy, 'publish', true)).toEqual({ ask: false, because: 'never-ask' });
  expect(decideApproval(policy, 'publish', undefined)).toEqual({ ask: false, because: 'never-ask' });
  expect(decideApproval(policy, 'echo', false)).toEqual({ ask: true, because: 'always-ask' });
  expect(decideApproval(policy, 'echo', undefined)).toEqual({ ask: true, because: 'always-ask' });
});

test('a named tool wins over *, a remembered answer over * but not over a named always-ask', () => {
  const everything = policyOf({ alwaysAsk: ['*'], neverAsk: ['word_count'], remembered: ['publish'] });
  expect(decideApproval(everything, 'sleep', false)).toEqual({ ask: true, because: 'always-ask' });
  expect(decideApproval(everything, 'word_count', false)).toEqual({ ask: false, because: 'never-ask' });
  expect(decideApproval(everything, 'publish', true)).toEqual({ ask: false, because: 'remembered' });
  const nothing = policyOf({ neverAsk: ['*'], alwaysAsk: ['deploy'] });
  expect(decideApproval(nothing, 'publish', true)).toEqual({ ask: false, because: 'never-ask' });
  expect(decideApproval(nothing, 'deploy', false)).toEqual({ ask: true, because: 'always-ask' });
});

test('decisions follow the precedence for any lists (property)', () => {
  const names = fc.constantFrom('a', 'b', 'c', '*');
  fc.assert(
    fc.property(
      fc.uniqueArray(names),
      fc.uniqueArray(names),
      fc.uniqueArray(fc.constantFrom('a', 'b', 'c')),
      fc.constantFrom('a', 'b', 'c'),
      fc.constantFrom(true, false, undefined),
      (neverAsk, rawAlways, rawRemembered, tool, declared) => {
        const alwaysAsk = rawAlways.filter((name) => !neverAsk.includes(name));
        const remembered = rawRemembered.filter((name) => !alwaysAsk.includes(name));
        const decision: ApprovalDecision = decideApproval(
          policyOf({ neverAsk, alwaysAsk, remembered }),
          tool,
          declared,
        );
        let expected: ApprovalDecision;
        if (alwaysAsk.includes(tool)) expected = { ask: true, because: 'always-ask' };
        else if (neverAsk.includes(tool)) expected = { ask: false, because: 'never-ask' };
        else if (remembered.includes(tool)) expected = { ask: false, because: 'remembered' };
        else if (alwaysAsk.includes('*')) expected = { ask: true, because: 'always-ask' };
        else if (neverAsk.includes('*')) expected = { ask: false, because: 'never-ask' };
        else if (declared === undefined) expected = { ask: 'declared' };
        else expected = declared ? { ask: true, because: 'declared' } : { ask: false, because: 'not-needed' };
        expect(decision).toEqual(expected);
      },
    ),
  );
});

test('a change replaces the lists it gives, raises the version, and forgets what it makes always-ask', () => {
  const before = policyOf({ neverAsk: ['echo'], remembered: ['publish', 'sleep'] });
  const after = changedPolicy(before, { alwaysAsk: ['publish'] });
  expect(after).toEqual({ version: 4, neverAsk: ['echo'], alwaysAsk: ['publish'], remembered: ['sleep'] });
  expect(changedPolicy(after, { remembered: [] }).remembered).toEqual([]);
  // An empty change changes nothing but the version: the tree is given the policy again.
  expect(changedPolicy(after, {})).toEqual({ ...after, version: 5 });
});

test('malformed and contradictory changes are Protocol errors naming the field', () => {
  const policy = policyOf();
  const cases: [unknown, RegExp][] = [
    [{ neverAsk: ['bad name!'] }, /neverAsk\.0/],
    [{ neverAsk: 'publish' }, /neverAsk/],
    [{ alwaysAsk: ['publish', 'publish'] }, /alwaysAsk\.1: publish is listed twice/],
    [{ neverAsk: ['publish'], alwaysAsk: ['publish'] }, /alwaysAsk\.0: publish is in neverAsk too/],
    [{ remembered: ['*'] }, /remembered\.0: '\*' cannot be remembered/],
    [{ alwaysAsk: ['x'], remembered: ['x'] }, /remembered\.0: x is in alwaysAsk/],
    [{ neverAsk: [], extra: true }, /extra|Unrecognized/i],
    [null, /approval policy change/],
    [{ neverAsk: Array.from({ length: maxPolicyTools + 1 }, (_, n) => `t${n}`) }, /at most 128 tool names/],
  ];
  for (const [change, message] of cases) {
    const error = thrown(() => changedPolicy(policy, change));
    expect(error.kind).toBe(ErrorKind.Protocol);
    expect(error.message).toMatch(message);
  }
});

test('a policy never passes its byte bound, however full its lists', () => {
  const longest = (prefix: string, n: number) => `${prefix}${n.toString().padStart(3, '0')}`.padEnd(100, 'x');
  const full = {
    neverAsk: Array.from({ length: maxPolicyTools }, (_, n) => longest('n', n)),
    alwaysAsk: Array.from({ length: maxPolicyTools }, (_, n) => longest('a', n)),
  };
  const error = thrown(() => changedPolicy(policyOf(), full));
  expect(error.kind).toBe(ErrorKind.Protocol);
  expect(error.message).toMatch(/over the 12288-byte limit of an approval policy/);
  // Filled as far as it goes, it stays within the bound.
  let policy = policyOf();
  for (let n = 0; n < maxPolicyTools; n++) {
    const refusal = rememberRefusal(policy, longest('r', n));
    if (refusal) {
      expect(refusal.kind).toBe(ErrorKind.QuotaExceeded);
      break;
    }
    policy = rememberedPolicy(policy, longest('r', n));
  }
  expect(jsonBytes(policy)).toBeLessThanOrEqual(maxPolicyBytes);
  expect(policy.remembered.length).toBeGreaterThan(100);
});

test('remembering: once per tool, never an always-ask tool or *, within the count bound', () => {
  const policy = policyOf({ alwaysAsk: ['deploy'] });
  const remembered = rememberedPolicy(policy, 'publish');
  expect(remembered).toEqual({ ...policy, version: 4, remembered: ['publish'] });
  expect(rememberedPolicy(remembered, 'publish')).toBe(remembered);
  expect(rememberRefusal(policy, 'deploy')?.kind).toBe(ErrorKind.PermissionDenied);
  expect(rememberRefusal(policy, '*')?.kind).toBe(ErrorKind.Protocol);
  let full = policy;
  for (let n = 0; n < maxPolicyTools; n++) full = rememberedPolicy(full, `t${n}`);
  expect(rememberRefusal(full, 'one_more')?.kind).toBe(ErrorKind.QuotaExceeded);
  expect(thrown(() => rememberedPolicy(full, 'one_more')).message).toMatch(/forget some/);
});
