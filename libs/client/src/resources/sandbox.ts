import type {
  AsyncPaymentSimulation,
  ChargebackAction,
  ChargebackResponse,
  OpenChargebackRequest,
  TransactionResponse,
} from '@byrd/contracts';
import { segment, type HttpTransport, type RequestOptions } from '../http.js';

/**
 * `/api/v2/sandbox` (sandbox keys only): stand in for the shopper of an async payment and for the
 * card schemes, so an integration can exercise every outcome and webhook without real money.
 */
export class Sandbox {
  constructor(private readonly http: HttpTransport) {}

  /** Acts as the shopper of a pending Multibanco / MB WAY payment: `pay`, `refuse` (MB WAY) or `expire`. */
  simulatePayment(
    transactionId: string,
    action: AsyncPaymentSimulation,
    options?: RequestOptions,
  ): Promise<TransactionResponse> {
    const path = `/api/v2/sandbox/payments/${segment(transactionId)}/${segment(action)}`;
    return this.http.call({ api: 'gateway', method: 'POST', path, options });
  }

  /** Opens a chargeback on a successful payment or capture (`chargeback.created`). */
  openChargeback(chargeback: OpenChargebackRequest, options?: RequestOptions): Promise<ChargebackResponse> {
    const path = '/api/v2/sandbox/chargebacks';
    return this.http.call({ api: 'gateway', method: 'POST', path, body: chargeback, options });
  }

  getChargeback(chargebackId: string, options?: RequestOptions): Promise<ChargebackResponse> {
    const path = `/api/v2/sandbox/chargebacks/${segment(chargebackId)}`;
    return this.http.call({ api: 'gateway', method: 'GET', path, options });
  }

  /** Moves a chargeback (`chargeback.<action>`); 422 when the move is not allowed from its status. */
  moveChargeback(
    chargebackId: string,
    action: ChargebackAction,
    options?: RequestOptions,
  ): Promise<ChargebackResponse> {
    const path = `/api/v2/sandbox/chargebacks/${segment(chargebackId)}/${segment(action)}`;
    return this.http.call({ api: 'gateway', method: 'POST', path, options });
  }
}
