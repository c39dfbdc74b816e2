import type { OpenAPIObject } from '@nestjs/swagger';
import { errorResponse } from '../http/docs.js';
import { OpenApiResponseValidator } from './openapi-responses.js';

// A document shaped as the services' are: a nullable nested object ($ref), enums, and the error
// responses the platform's docs helpers write (the error body with its code narrowed per status).
const document = {
  openapi: '3.0.0',
  info: { title: 'test', version: '1' },
  paths: {
    '/api/v2/orders/{orderId}': {
      get: {
        responses: {
          200: {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Order' } } },
          },
          404: errorResponse(404, ['BYRD901']),
        },
      },
    },
  },
  components: {
    schemas: {
      Order: {
        type: 'object',
        required: ['orderId', 'status', 'shopper'],
        properties: {
          orderId: { type: 'string', format: 'uuid', example: 'x' },
          status: { type: 'string', enum: ['created', 'paid'] },
          shopper: { nullable: true, allOf: [{ $ref: '#/components/schemas/Shopper' }] },
        },
      },
      Shopper: { type: 'object', properties: { email: { type: 'string' } } },
      ErrorBody: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as unknown as OpenAPIObject;

const route = '/api/v2/orders/:orderId';
const order = { orderId: '6f1c2a4e-2b1d-4d8a-9c3e-5a7b8c9d0e1f', status: 'paid', shopper: null };

describe('OpenApiResponseValidator', () => {
  const validator = new OpenApiResponseValidator(document);
  const check = (status: number, body: unknown, contentType = 'application/json; charset=utf-8') =>
    validator.check('GET', route, status, contentType, JSON.stringify(body));

  it('accepts answers the document describes (a null nested object included)', () => {
    expect(check(200, order)).toBeUndefined();
    expect(check(200, { ...order, shopper: { email: 'ana@example.com' } })).toBeUndefined();
    expect(check(404, { code: 'BYRD901', message: 'Order x was not found' })).toBeUndefined();
  });

  it('reports a field whose value the schema does not allow', () => {
    expect(check(200, { ...order, status: 'PAID' })?.problem).toMatch(
      /\/status must be equal to one of the allowed values/,
    );
    expect(check(200, { ...order, orderId: 42 })?.problem).toMatch(/\/orderId must be string/);
    expect(check(200, { status: 'paid', shopper: null })?.problem).toMatch(
      /must have required property 'orderId'/,
    );
  });

  it('reports a status the operation does not list, and an error code its status does not carry', () => {
    expect(check(409, { code: 'BYRD409', message: 'running' })?.problem).toMatch(
      /status 409 is not documented/,
    );
    expect(check(404, { code: 'BYRD900', message: 'bad' })?.problem).toMatch(
      /\/code must be equal to one of/,
    );
  });

  it('reports a media type the response does not document', () => {
    expect(check(200, order, 'text/html')?.problem).toMatch(
      /answered text\/html, documented: application\/json/,
    );
  });

  it('leaves routes outside the document alone', () => {
    expect(validator.check('GET', '/metrics', 200, 'text/plain', 'up 1')).toBeUndefined();
  });
});
