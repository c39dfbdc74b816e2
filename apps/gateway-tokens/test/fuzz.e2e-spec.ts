import { DataSource } from 'typeorm';
import { futureExpiry } from '@byrd/platform/testing';
import { describeFuzzing } from '@byrd/platform/testing/fuzz';
import { TokensHarness } from './harness.js';

const token = {
  Type: 'Card',
  CustomReference: 'customer-fuzz',
  Alias: 'My card',
  RedirectUrl: 'https://shop.example.com/cards',
  Card: { number: '4242424242424242', expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
};

describeFuzzing(
  'gateway-tokens',
  async () => {
    const h = await TokensHarness.start();
    const tokenIds: string[] = [];
    for (const number of ['4242424242424242', '5448280000000007'])
      tokenIds.push((await h.createToken({ number })).body.tokenId);
    return {
      baseUrl: h.tokensUrl,
      databaseUrl: (h.tokens.get(DataSource).options as { url: string }).url,
      options: {
        headers: { 'x-api-key': h.merchant.apiKey },
        // The same card with an empty CustomReference and with none once collided (a 500).
        examples: {
          'POST /api/v2/tokens': [
            token,
            { ...token, CustomReference: '' },
            { ...token, CustomReference: undefined },
          ],
        },
        pathValues: { tokenId: tokenIds },
      },
      mustSee: [201, 400],
      stop: () => h.stop(),
    };
  },
);
