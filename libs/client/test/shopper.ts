/** What a shopper's browser sends (the 3DS SDK reads it from the page). */
const BROWSER = {
  acceptHeader: 'text/html',
  javaEnabled: false,
  javascriptEnabled: true,
  language: 'pt-PT',
  colorDepth: 24,
  screenHeight: 900,
  screenWidth: 1440,
  timeZone: -60,
  userAgent: 'Mozilla/5.0 (client test)',
};

/**
 * The shopper's side of a 3D Secure challenge, as the page behind `action.url` drives it in a
 * browser: the SDK protocol (preAuth, auth), the sandbox issuer's challenge form, and the code typed in.
 */
export async function answerChallenge(edgeUrl: string, threeDSecureId: string, otp: string): Promise<void> {
  const sdk = async (path: string, body: unknown) => {
    const response = await fetch(`${edgeUrl}/3ds/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`3DS ${path}: ${response.status} ${await response.text()}`);
    return ((await response.json()) as { data: Record<string, string> }).data;
  };
  const form = async (url: string, fields: Record<string, string>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    return response.text();
  };

  await sdk(`/v2/${threeDSecureId}/preAuth`, { browser: BROWSER });
  const auth = await sdk(`/v1/${threeDSecureId}/auth`, { threeDSCompInd: 'Y' });
  const creq = Buffer.from(
    JSON.stringify({
      threeDSServerTransID: auth.processId,
      acsTransID: auth.challengeId,
      messageVersion: auth.challengeVersion,
      messageType: 'CReq',
      challengeWindowSize: '05',
    }),
  ).toString('base64url');
  const challenge = await form(auth.challengeUrl, { creq });
  const answerUrl = /<form method="post" action="([^"]+)"/.exec(challenge)?.[1];
  if (!answerUrl) throw new Error(`no challenge form in: ${challenge.slice(0, 300)}`);
  await form(answerUrl, { threeDSServerTransID: threeDSecureId, otp, action: 'submit' });
}
