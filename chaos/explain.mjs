// Why the payments of failed flows ended as they did, read from the run's own rows before its world is
// removed: the transaction, its 3DS session and what the (sandbox) acquirer holds under its id.
// A failure that is a known, correct consequence of a fault is named as such, so the report never
// leaves one unexplained.

const ROWS = `
  SELECT t.id, t.status, t.code, t.refused_by_order AS "refusedByOrder",
         s.status AS "sessionStatus", s.challenge_required AS "challengeRequired",
         s.challenge_completed_at AS "challengeCompletedAt",
         l.operation AS "acquirerOperation", l.outcome AS "acquirerOutcome",
         l.voided_at AS "voidedAt"
    FROM transactions t
    LEFT JOIN three_ds_sessions s ON s.transaction_id = t.id
    LEFT JOIN sandbox_acquirer_ledger l ON l.reference = t.id
   WHERE t.id = ANY($1::uuid[])`;

/** The causes, each with what it means for the shopper and the merchant. */
export const CAUSES = {
  cutBeforeAcquirer:
    "written ahead, never reached the acquirer (its replica died or stalled past ACQUIRER_RECOVERY_AFTER_MS between the in-flight commit and the acquirer call): the recovery voided its reference and ended it Error, BYRD299, no money moved; the merchant, who still has the card, token or pre-authorisation, can send it again (a payment's order is payable again)",
  challengeCutBeforeAcquirer:
    "an answered 3DS challenge's payment that never reached the acquirer, and whose sealed card was gone, so the recovery could not send it: voided, Error, BYRD299, no money; its shopper must pay again",
  endedBeforeAcquirer:
    'ended Error before the acquirer (the order lock or the idempotency-key check failed): no money; the order is payable again',
  challengeExpired:
    "its 3DS challenge ran out of time (THREE_DS_TIMEOUT_MS) before the shopper's answer got through (requests slowed or retried by the fault): Expired, payment Denied, BYRD205, no money; the order is payable again",
  refusedByOrder:
    'refused by its order (another attempt held or paid it): Denied, BYRD205, the card never reached the acquirer',
  other: 'not explained by the rows',
};

/** One explanation per failed flow that names a payment: { flow, transactionId, cause, row }. */
export async function explainFailures({ postgres, dbs, flows, timeline }) {
  const failed = flows.filter((flow) => !flow.ok && flow.transactionId);
  if (failed.length === 0) return [];
  const rows = await postgres.query(ROWS, [failed.map((flow) => flow.transactionId)], dbs.payments);
  const byId = new Map(rows.map((row) => [row.id, row]));
  return failed.map((flow) => {
    const row = byId.get(flow.transactionId);
    return {
      flow: flow.name,
      transactionId: flow.transactionId,
      cause: causeOf(row),
      ...(row ? { row: { ...row, id: undefined } } : {}),
      ...faultNear(row?.challengeCompletedAt, timeline),
    };
  });
}

function causeOf(row) {
  if (!row) return 'other';
  if (row.refusedByOrder) return 'refusedByOrder';
  if (row.sessionStatus === 'Expired' && row.status === 'Denied') return 'challengeExpired';
  if (row.status === 'Error' && row.code === 'BYRD299') {
    // `void` inserts the reference when no request with it ever arrived: operation 'Void'.
    if (row.acquirerOperation === 'Void')
      return row.challengeRequired ? 'challengeCutBeforeAcquirer' : 'cutBeforeAcquirer';
    if (row.acquirerOperation === null || row.acquirerOperation === undefined) return 'endedBeforeAcquirer';
  }
  return 'other';
}

/** The fault that started closest after its 3DS ended (for a challenge: the kill that cut it off). */
function faultNear(at, timeline) {
  if (!at) return {};
  const when = new Date(at).getTime();
  const next = timeline
    .filter((fault) => fault.startedAt >= when - 1_000 && fault.startedAt - when < 60_000)
    .sort((a, b) => a.startedAt - b.startedAt)[0];
  return next ? { fault: next.name, answeredBeforeFaultMs: next.startedAt - when } : {};
}
