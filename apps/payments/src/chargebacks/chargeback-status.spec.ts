import { CHARGEBACK_STATUSES, ChargebackAction } from '@byrd/contracts';
import { ACTION_STATUS, canMove, CHARGEBACK_TRANSITIONS, STATUS_EVENT } from './chargeback-status.js';

describe('chargeback state machine', () => {
  it('allows exactly the moves of the dispute lifecycle', () => {
    const legal = CHARGEBACK_STATUSES.flatMap((from) =>
      CHARGEBACK_STATUSES.filter((to) => canMove(from, to)).map((to) => `${from}→${to}`),
    );
    expect(legal.sort()).toEqual(
      [
        'Created→Disputing',
        'Created→PendingAction',
        'Created→Lost',
        'Created→Closed',
        'Disputing→PendingAction',
        'Disputing→Won',
        'Disputing→Lost',
        'PendingAction→Disputing',
        'PendingAction→Won',
        'PendingAction→Lost',
        'PendingAction→Closed',
        'Won→Closed',
        'Lost→Closed',
      ].sort(),
    );
  });

  it('never moves back to Created and never leaves Closed', () => {
    for (const from of CHARGEBACK_STATUSES) expect(canMove(from, 'Created')).toBe(false);
    expect(CHARGEBACK_TRANSITIONS.Closed).toEqual([]);
  });

  it('names each action after the event it emits', () => {
    for (const action of Object.values(ChargebackAction)) {
      expect(STATUS_EVENT[ACTION_STATUS[action]]).toBe(`chargeback.${action}`);
    }
  });
});
