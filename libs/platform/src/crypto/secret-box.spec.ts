import { randomBytes } from 'node:crypto';
import { SecretBox, parseKeyList } from './secret-box.js';

describe('SecretBox', () => {
  const key = () => randomBytes(32);

  it('opens what it sealed, and the stored form shows nothing of the secret', () => {
    const box = new SecretBox([key()]);
    const sealed = box.seal('whsec_c2VjcmV0', 'settings:1:signing_secret');
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:[A-Za-z0-9+/=]+$/);
    expect(sealed).not.toContain('c2VjcmV0');
    expect(box.open(sealed, 'settings:1:signing_secret')).toBe('whsec_c2VjcmV0');
    expect(box.seal('same', 'c')).not.toBe(box.seal('same', 'c')); // a fresh IV each time
  });

  it('refuses a value moved to another context or tampered with', () => {
    const box = new SecretBox([key()]);
    const sealed = box.seal('api-key-1', 'settings:1:api_key');
    expect(() => box.open(sealed, 'settings:2:api_key')).toThrow();
    const tampered = `${sealed.slice(0, -4)}AAAA`;
    expect(() => box.open(tampered, 'settings:1:api_key')).toThrow();
  });

  it('rotates: the first key seals, older keys still open, and unknown keys are named', () => {
    const [oldKey, newKey] = [key(), key()];
    const before = new SecretBox([oldKey]).seal('password', 'ctx');
    const rotated = new SecretBox([newKey, oldKey]);
    expect(rotated.open(before, 'ctx')).toBe('password');
    expect(rotated.needsResealing(before)).toBe(true);
    expect(rotated.needsResealing(rotated.seal('password', 'ctx'))).toBe(false);
    expect(() => new SecretBox([newKey]).open(before, 'ctx')).toThrow(/not configured/);
  });

  it('parses a list of base64 keys and says which entry is wrong', () => {
    const list = `${key().toString('base64')}, ${key().toString('base64')}`;
    expect(parseKeyList(list)).toHaveLength(2);
    expect(() => parseKeyList('')).toThrow(/at least one/);
    expect(() => parseKeyList(`${key().toString('base64')},c2hvcnQ=`)).toThrow(/key 2/);
  });
});
