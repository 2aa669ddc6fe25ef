// SPEC S3.9: a capability proves a thread's identity, lineage and run; nothing else passes.
import { createHmac, randomBytes } from 'node:crypto';
import {
  capabilityRefusal,
  isAncestorOf,
  isSelfOrBelow,
  mintCapability,
  provenCapability,
  rootCapability,
} from '../../domain/capability';
import { hmacSha256Hex } from '../../domain/bytes';
import { ErrorKind, KitError } from '../../domain/errors';

const id = (digit: string) => `thread_${digit.repeat(32)}` as const;
const runKey = randomBytes(32).toString('hex');
const root = id('a');
const child = id('b');
const grandchild = id('c');

test('HMAC-SHA256 in plain TypeScript matches node:crypto', () => {
  for (const text of ['', 'abc', 'x'.repeat(1_000), 'ünïcödé ✓']) {
    const key = randomBytes(32).toString('hex');
    expect(hmacSha256Hex(key, text)).toBe(
      createHmac('sha256', Buffer.from(key, 'hex')).update(text).digest('hex'),
    );
  }
});

test('a minted capability is proven; every changed field, another key or another root is refused', () => {
  const capability = mintCapability(runKey, root, [root, child], grandchild);
  expect(capabilityRefusal(runKey, root, capability)).toBeUndefined();
  expect(capabilityRefusal(runKey, root, rootCapability(runKey, root))).toBeUndefined();
  const forged = [
    { ...capability, threadId: id('d') },
    { ...capability, lineage: [root] },
    { ...capability, lineage: [root, id('d')] },
    { ...capability, proof: '0'.repeat(64) },
    { ...capability, rootId: id('d') },
    { ...rootCapability(runKey, root), lineage: [root] },
    mintCapability(randomBytes(32).toString('hex'), root, [root, child], grandchild),
    mintCapability(runKey, root, [child], grandchild),
    mintCapability(runKey, root, [root, grandchild], grandchild),
  ];
  for (const candidate of forged) expect(capabilityRefusal(runKey, root, candidate)).toBeDefined();
  for (const junk of [null, undefined, 1, 'x', [], {}, { ...capability, extra: 1 }])
    expect(capabilityRefusal(runKey, root, junk)).toBeDefined();
  expect(() => provenCapability(runKey, root, { ...capability, proof: 'f'.repeat(64) })).toThrow(KitError);
  try {
    provenCapability(runKey, root, {});
  } catch (error) {
    expect((error as KitError).kind).toBe(ErrorKind.PermissionDenied);
  }
});

test('relations come from the proven lineage', () => {
  const capability = mintCapability(runKey, root, [root, child], grandchild);
  const childCapability = mintCapability(runKey, root, [root], child);
  expect(isSelfOrBelow(capability, child)).toBe(true);
  expect(isSelfOrBelow(capability, grandchild)).toBe(true);
  expect(isSelfOrBelow(childCapability, grandchild)).toBe(false);
  expect(isAncestorOf(childCapability, [root, child])).toBe(true);
  expect(isAncestorOf(capability, [root, child])).toBe(false);
});
