import {
  ChargebackEvents,
  type ChargebackAction,
  type ChargebackEventName,
  type ChargebackStatus,
} from '@byrd/contracts';

/** The status each sandbox action moves a chargeback to. */
export const ACTION_STATUS: Record<ChargebackAction, ChargebackStatus> = {
  disputing: 'Disputing',
  pendingaction: 'PendingAction',
  won: 'Won',
  lost: 'Lost',
  closed: 'Closed',
};

/**
 * The legal moves. A new chargeback can be disputed, need action, be accepted (lost) or withdrawn
 * (closed); a dispute ends won or lost, possibly after a request for more evidence; a decision
 * is only closed afterwards; a closed chargeback never moves again.
 */
export const CHARGEBACK_TRANSITIONS: Record<ChargebackStatus, readonly ChargebackStatus[]> = {
  Created: ['Disputing', 'PendingAction', 'Lost', 'Closed'],
  Disputing: ['PendingAction', 'Won', 'Lost'],
  PendingAction: ['Disputing', 'Won', 'Lost', 'Closed'],
  Won: ['Closed'],
  Lost: ['Closed'],
  Closed: [],
};

export function canMove(from: ChargebackStatus, to: ChargebackStatus): boolean {
  return CHARGEBACK_TRANSITIONS[from].includes(to);
}

/** The event announcing a chargeback reached `status`. */
export const STATUS_EVENT: Record<ChargebackStatus, ChargebackEventName> = {
  Created: ChargebackEvents.Created,
  Disputing: ChargebackEvents.Disputing,
  PendingAction: ChargebackEvents.PendingAction,
  Won: ChargebackEvents.Won,
  Lost: ChargebackEvents.Lost,
  Closed: ChargebackEvents.Closed,
};
