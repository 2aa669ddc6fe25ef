import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sha256Hex, utf8, utf8Length } from '../../domain/bytes';

const nodeSha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

test('sha256Hex matches the FIPS 180-4 vectors and node:crypto', () => {
  expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  for (const text of ['a'.repeat(55), 'a'.repeat(56), 'a'.repeat(64), 'é✓𝄞', 'x'.repeat(100_000)])
    expect(sha256Hex(text)).toBe(nodeSha256(text));
});

test('sha256Hex, utf8 and utf8Length agree with node for any string', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
      expect(Buffer.from(utf8(text)).equals(Buffer.from(text, 'utf8'))).toBe(true);
      expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'));
      expect(sha256Hex(text)).toBe(nodeSha256(text));
    }),
    { numRuns: 300 },
  );
});
