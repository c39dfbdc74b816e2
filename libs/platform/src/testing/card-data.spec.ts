import { cardDataLeaks } from './card-data.js';

describe('cardDataLeaks', () => {
  it('finds card numbers anywhere and CVVs next to their name, nothing else', () => {
    const places = {
      logs: '{"card":{"number":"4242424242424242","cvv":"987"}}',
      database: 'masked 424242******4242, amount 987',
    };
    expect(cardDataLeaks(places, ['4242424242424242'], ['987'])).toEqual([
      'logs: card 4242424242424242',
      'logs: CVV 987',
    ]);
  });
});
