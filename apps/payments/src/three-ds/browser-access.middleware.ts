import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, type NestMiddleware } from '@nestjs/common';

/**
 * The SDK API and bundle are called from merchants' pages, on any origin. No cookie or key is
 * involved (the session GUID is the credential), so any origin may call them.
 */
@Injectable()
export class BrowserAccessMiddleware implements NestMiddleware {
  use(req: IncomingMessage, res: ServerResponse, next: () => void): void {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-expose-headers', 'x-request-id');
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'GET, POST');
      res.setHeader(
        'access-control-allow-headers',
        req.headers['access-control-request-headers'] ?? 'content-type',
      );
      res.setHeader('access-control-max-age', '600');
      res.statusCode = 204;
      res.end();
      return;
    }
    // The public SDK posts auth and postAuth with `content-type: application/json` and no body:
    // the platform's JSON parser reads that as {}.
    next();
  }
}
