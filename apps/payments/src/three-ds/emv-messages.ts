import { z } from 'zod';
import type { ChallengeRequestMessage, ChallengeResponseMessage } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';

// The EMV 3DS browser messages travel as base64url JSON in form fields (threeDSMethodData, creq, cres).

const guid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

const methodDataSchema = z.object({
  threeDSServerTransID: guid,
  threeDSMethodNotificationURL: z.string().max(2048).optional(),
});

const creqSchema = z.object({
  threeDSServerTransID: guid,
  acsTransID: guid,
  messageVersion: z.string().max(16),
  messageType: z.literal('CReq'),
  challengeWindowSize: z.enum(['01', '02', '03', '04', '05']).optional(),
});

const cresSchema = z.object({
  threeDSServerTransID: guid,
  acsTransID: guid,
  messageType: z.literal('CRes'),
});

export type MethodData = z.infer<typeof methodDataSchema>;

export function encodeMessage(message: object): string {
  return Buffer.from(JSON.stringify(message), 'utf8').toString('base64url');
}

export function decodeMethodData(encoded: string): MethodData {
  return decode('threeDSMethodData', encoded, methodDataSchema);
}

export function decodeChallengeRequest(encoded: string): ChallengeRequestMessage {
  const creq = decode('creq', encoded, creqSchema);
  return { ...creq, challengeWindowSize: creq.challengeWindowSize ?? '05' };
}

export function decodeChallengeResponse(
  encoded: string,
): Pick<ChallengeResponseMessage, 'threeDSServerTransID' | 'acsTransID'> {
  return decode('cres', encoded, cresSchema);
}

function decode<T>(field: string, encoded: string, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    // Senders use base64url (EMV) or plain base64; Node's base64 decoder reads both alphabets.
    json = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw ApiError.invalidField(field, 'must be base64-encoded JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ApiError.invalidField(`${field}.${issue.path.join('.')}`, issue.message);
  }
  return parsed.data;
}
