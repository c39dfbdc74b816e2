/**
 * The shopper's side of a 3DS challenge as the browser SDK drives it (`ByrdThreeDS.authenticate`):
 * preAuth, auth, the issuer's challenge page and the code typed into it, then postAuth for the
 * outcome. `base` is the payments server (its PUBLIC_BASE_URL must be itself); `id` is
 * `threeDSecure.id`. Returns the postAuth answer.
 */
export async function authenticateWithSdk(base: string, id: string, otp = '1234'): Promise<any> {
  const api = async (path: string, body: unknown = {}) => {
    const response = await fetch(`${base}/3ds/api${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    // 2xx answers are `{ data }`, as the public 3DS SDK reads them.
    return { status: response.status, body: response.ok ? json.data : json };
  };
  const form = async (url: string, fields: Record<string, string>) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return response.text();
  };

  await api(`/v2/${id}/preAuth`, { browser: { userAgent: 'test', language: 'en-US' } });
  const auth = await api(`/v1/${id}/auth`, { threeDSCompInd: 'Y' });
  if (!auth.body.challengeUrl) throw new Error(`No challenge for ${id}: ${JSON.stringify(auth.body)}`);
  const creq = Buffer.from(
    JSON.stringify({
      threeDSServerTransID: id,
      acsTransID: auth.body.challengeId,
      messageVersion: auth.body.challengeVersion,
      messageType: 'CReq',
      challengeWindowSize: '05',
    }),
  ).toString('base64url');
  const page = await form(auth.body.challengeUrl, { creq });
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`No challenge form in: ${page.slice(0, 500)}`);
  await form(action, { threeDSServerTransID: id, otp, action: 'submit' });
  const outcome = await api(`/v2/${id}/postAuth`);
  if (outcome.status !== 200)
    throw new Error(`postAuth answered ${outcome.status}: ${JSON.stringify(outcome.body)}`);
  return outcome.body;
}
