import type {
  ThreeDSAuthResponse,
  ThreeDSPostAuthResponse,
  ThreeDSPreAuthResponse,
  TransactionStatus,
} from '@byrd/contracts';
import { assertUnreachable } from '@byrd/platform';
import type { Transaction } from '../transactions/transaction.entity.js';
import type { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';

// The 3DS browser SDK protocol answers (API-FACTS.md "3D Secure"). Our 3DS server's transaction id
// (threeDSServerTransID, `processId`) is the session id.

/** `POST /api/v2/{id}/preAuth`. `dsMethodUrl` is empty when no 3DS Method is to run. */
export function presentPreAuth(
  session: ThreeDSSession,
  dsMethodUrl: string,
  notificationUrl: string,
): ThreeDSPreAuthResponse {
  return { id: session.id, processId: session.id, dsMethodUrl, notificationUrl };
}

/** `POST /api/v1/{id}/auth`. `challengeUrl` is empty when the shopper need not be challenged. */
export function presentAuth(session: ThreeDSSession, challengeUrl: string): ThreeDSAuthResponse {
  return {
    id: session.id,
    processId: session.id,
    challengeId: session.acsTransId,
    challengeVersion: session.protocolVersion,
    challengeUrl,
  };
}

/** `POST /api/v2/{id}/postAuth` of an ended session: the authentication and the payment it led to. */
export function presentPostAuth(session: ThreeDSSession, transaction: Transaction): ThreeDSPostAuthResponse {
  if (session.status === 'Created' || session.transStatus === null) {
    throw new Error(`3DS session ${session.id} has not ended`);
  }
  // The card goes to the acquirer only for an authenticated (or not enrolled) shopper: PaymentAuthorizer.
  const executePayment = session.status === 'Authorized' || session.status === 'NotEnrolled';
  return {
    transactionId: transaction.id,
    callbackUrl: transaction.redirectUrl ?? '',
    status: session.status,
    // The SDK's transStatus is two-valued ("Y" | "N"), read as "go on with the payment": a not
    // enrolled card (EMV "U") is paid, so "Y". The EMV value stays on GET /transactions/{id}.
    transStatus: executePayment ? 'Y' : 'N',
    transStatusReason: session.transStatusReason,
    authenticationData: {
      threeDsVersion: 'V2',
      aav: session.aav,
      dsTransactionId: session.dsTransactionId,
      eci: session.eci,
      verificationMethod: 'ThreeDSecure',
      protocolVersion: session.protocolVersion,
    },
    executePayment,
    paymentStatus: paymentStatusOf(transaction.status),
    code: transaction.code,
    message: transaction.description,
  };
}

/** postAuth's three-valued `paymentStatus` of a transaction status. */
export function paymentStatusOf(status: TransactionStatus): ThreeDSPostAuthResponse['paymentStatus'] {
  switch (status) {
    case 'Success':
      return 'Success';
    case 'Denied':
    case 'Canceled':
      return 'Denied';
    case 'TemporaryFailed':
    case 'Error':
      return 'Error';
    // Not settled: never reported as a success.
    case 'Created':
    case 'Processing':
    case 'PendingMerchantAction':
      return 'Error';
    default:
      return assertUnreachable(status);
  }
}

/**
 * Where `action.url` sends the shopper at the end: the payment's redirectUrl with `transactionId`
 * (a card verification: `tokenId`) and `status` (the transaction's unless told) added to its query
 * (the rest kept). Null when there is none, or it is not http(s).
 */
export function returnUrlOf(
  transaction: Transaction,
  status: TransactionStatus = transaction.status,
): string | null {
  if (!transaction.redirectUrl) return null;
  let url: URL;
  try {
    url = new URL(transaction.redirectUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  // A card verification returns with the token it verified; a payment with itself.
  if (transaction.operationType === 'Verification')
    url.searchParams.set('tokenId', transaction.tokenId ?? '');
  else url.searchParams.set('transactionId', transaction.id);
  url.searchParams.set('status', status);
  return url.toString();
}
