import { decodeChallengeRequest, decodeMethodData, encodeMessage } from './emv-messages.js';

const ID = '6f1c2b9e-8d4a-4f7e-9a51-0c3e2d1b4a59';
const ACS = '0b7c4a1e-2f3d-4c5b-8a69-7e1d2c3b4a50';

describe('EMV browser messages', () => {
  it('reads a CReq in base64url or base64, defaulting the window size', () => {
    const creq = { threeDSServerTransID: ID, acsTransID: ACS, messageVersion: '2.2.0', messageType: 'CReq' };
    const plain = Buffer.from(JSON.stringify(creq)).toString('base64');
    expect(decodeChallengeRequest(encodeMessage(creq))).toEqual({ ...creq, challengeWindowSize: '05' });
    expect(decodeChallengeRequest(plain)).toEqual({ ...creq, challengeWindowSize: '05' });
  });

  it('names the field of a message that is not base64 JSON, or not the right message', () => {
    expect(() => decodeChallengeRequest('%%%')).toThrow('creq: must be base64-encoded JSON');
    const cres = encodeMessage({
      threeDSServerTransID: ID,
      acsTransID: ACS,
      messageVersion: '2.2.0',
      messageType: 'CRes',
    });
    expect(() => decodeChallengeRequest(cres)).toThrow(/^creq\.messageType/);
    expect(() => decodeMethodData(encodeMessage({ threeDSServerTransID: 'nope' }))).toThrow(
      /^threeDSMethodData\.threeDSServerTransID/,
    );
  });
});
