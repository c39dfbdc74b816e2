import { CardCipher, CardFingerprint } from './card-cipher.js';
import { KeyRing, newKekEntry, parseKeks } from './key-ring.js';

const card = { number: '4242424242424242', expiration: '12/30', holder: 'Ana Silva' };

describe('KeyRing', () => {
  it('wraps with the first key unless another is named, and names what is wrong', () => {
    const keys = parseKeks(`${newKekEntry('new')},${newKekEntry('old')}`);
    expect(new KeyRing(keys).active.id).toBe('new');
    expect(new KeyRing(keys, 'old').active.id).toBe('old');
    expect(() => new KeyRing(keys, 'gone')).toThrow('the active key "gone" is not among the listed keys');
    expect(() => parseKeks('k1:c2hvcnQ=')).toThrow('key "k1" is not 32 bytes of base64');
    expect(() => parseKeks(`${newKekEntry('a')},${newKekEntry('a')}`)).toThrow('key id "a" is listed twice');
    expect(() => parseKeks('')).toThrow('must list at least one');
  });
});

describe('CardCipher', () => {
  const k1 = newKekEntry('k1');
  const k2 = newKekEntry('k2');
  const cipher = new CardCipher(new KeyRing(parseKeks(k1)));

  it('keeps no card text in what it stores, and opens it again', () => {
    const sealed = cipher.seal('token-a', card);
    expect(sealed.kekId).toBe('k1');
    expect(sealed.ciphertext.toString('latin1')).not.toContain('4242');
    expect(cipher.open('token-a', sealed)).toEqual(card);
  });

  it('gives every record its own data key', () => {
    const a = cipher.seal('token-a', card);
    const b = cipher.seal('token-a', card);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
  });

  it('refuses a record moved to another token', () => {
    const sealed = cipher.seal('token-a', card);
    expect(() => cipher.open('token-b', sealed)).toThrow();
  });

  it('re-wraps a data key under the active KEK; the card then opens without the old key', () => {
    const sealed = cipher.seal('token-a', card);
    const rotating = new CardCipher(new KeyRing(parseKeks(`${k2},${k1}`)));
    const rewrapped = rotating.rewrap('token-a', sealed.wrappedKey, sealed.kekId);
    expect(rewrapped.kekId).toBe('k2');
    const onlyK2 = new CardCipher(new KeyRing(parseKeks(k2)));
    expect(onlyK2.open('token-a', { ...sealed, ...rewrapped })).toEqual(card);
    expect(() => onlyK2.open('token-a', sealed)).toThrow('key-encryption key "k1" is not configured');
  });
});

describe('CardFingerprint', () => {
  it('is the same for the same merchant and card, different across merchants and keys', () => {
    const fingerprints = new CardFingerprint(Buffer.alloc(32, 1));
    const a = fingerprints.of('m1', card.number);
    expect(fingerprints.of('m1', card.number).equals(a)).toBe(true);
    expect(fingerprints.of('m2', card.number).equals(a)).toBe(false);
    expect(new CardFingerprint(Buffer.alloc(32, 2)).of('m1', card.number).equals(a)).toBe(false);
  });
});
