// The merchant's webhook receiver of the chaos run: answers 200 (mode "ok"), 500 ("fail") or
// accepts the request and never answers ("hang"), and records every delivery it accepted with 2xx
// by its `webhook-id`, so the ledger can tell lost webhooks from duplicates.
import { createServer } from 'node:http';

export async function startReceiver() {
  const accepted = new Map(); // webhook-id -> { count, event, key }
  const hanging = new Set();
  let mode = 'ok';
  let refused = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (mode === 'hang') {
        hanging.add(res);
        res.once('close', () => hanging.delete(res));
        return;
      }
      if (mode === 'fail') {
        refused++;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('chaos: failing on purpose');
        return;
      }
      const id = String(req.headers['webhook-id'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const seen = accepted.get(id) ?? { count: 0, event: body.event };
      seen.count++;
      accepted.set(id, seen);
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hooks`,
    accepted,
    get refused() {
      return refused;
    },
    setMode(next) {
      mode = next;
      if (next !== 'hang') for (const res of hanging) res.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
