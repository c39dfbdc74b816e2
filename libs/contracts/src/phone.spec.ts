import { normalizeMbWayPhone } from './phone.js';

describe('normalizeMbWayPhone', () => {
  it.each([
    ['912345678', '+351912345678'],
    ['962 345 678', '+351962345678'],
    ['+351 932-345-678', '+351932345678'],
    ['00351912345678', '+351912345678'],
    ['351912345678', '+351912345678'],
    ['351#912345678', '+351912345678'],
    ['+44 7700 900123', '+447700900123'],
    ['0034612345678', '+34612345678'],
  ])('reads %s as %s', (input, expected) => {
    expect(normalizeMbWayPhone(input)).toBe(expected);
  });

  it.each([
    ['a Portuguese landline', '212345678'],
    ['a +351 landline', '+351212345678'],
    ['a Portuguese mobile with a digit missing', '91234567'],
    ['a number without its country code', '7700900123'],
    ['too many digits for E.164', '+1234567890123456'],
    ['letters', '+351 91234567a'],
    ['not a string', 912345678],
  ])('refuses %s', (_case, input) => {
    expect(normalizeMbWayPhone(input)).toBeNull();
  });
});
