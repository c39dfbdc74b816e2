import { createHash, createHmac, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import {
  isEventName,
  parseEnvelope,
  toPublicContent,
  type EventEnvelope,
  type EventName,
} from '@byrd/contracts';
import {
  ApiError,
  ErrorKind,
  NATS_CONTEXT,
  parseKeyList,
  PLATFORM_CONFIG,
  Refusal,
  type BaseConfig,
  type MerchantContext,
  type NatsContext,
} from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import { deliveryBody, deliveryHeaders } from '../delivery/deliver-webhook.usecase.js';

/** One webhook as `listen` streams it: the headers and body a real delivery would POST. */
export interface ListenedDelivery {
  id: string;
  event: EventName;
  headers: Record<string, string>;
  body: string;
}

/** A merchant's open `listen` stream (`GET /api/v1/webhooks/listen`). */
export interface ListenSession {
  /** Stands in for the settings id of a real delivery. */
  id: string;
  /**
   * The Standard Webhooks secret this session signs with (the receiver verifies with it): the same
   * for every session of the merchant, on every replica, so a reconnecting CLI needs no new secret.
   */
  signingSecret: string;
  deliveries: AsyncIterable<ListenedDelivery>;
  close(): Promise<void>;
}

/**
 * Streams one merchant may hold open on one replica: each is a consumer reading the whole event
 * stream, so an unbounded number (a script reconnecting in a loop, a hostile sandbox key) would
 * take the CPU and memory of a replica that also delivers live webhooks. Room enough for a team
 * sharing one sandbox key, each with a `listen` open and `trigger`s running (each watches a stream).
 */
export const LISTEN_SESSIONS_PER_MERCHANT = 25;

/**
 * `listen`: a merchant's events streamed as they happen, each as the webhook a setting would deliver
 * (same body, signed the same way with the session's own secret), for a developer's CLI to forward
 * to a local address that nothing outside can reach. Events are read from the stream by an
 * ephemeral ordered consumer starting at the session's opening, so a session writes nothing and
 * takes nothing from the settings' deliveries; closing it (or the connection) removes the consumer.
 * Sandbox keys only: live events go to registered settings.
 */
@Injectable()
export class ListenSessions implements OnModuleInit {
  private readonly logger = new Logger(ListenSessions.name);
  private readonly open = new Set<ListenSession>();
  /** Sessions held per merchant, counted from the moment one is asked for (before NATS answers). */
  private readonly held = new Map<string, number>();
  /** Set once the server closes: a session still opening then would hold the shutdown for ever. */
  private closing = false;
  /** Derives the merchants' listen secrets: the first (active) key of WEBHOOK_SECRETS_KEYS. */
  private readonly secretKey: Buffer;

  constructor(
    @Inject(NATS_CONTEXT) private readonly nats: NatsContext,
    @Inject(PLATFORM_CONFIG) private readonly config: BaseConfig,
    @Inject(WEBHOOK_CONFIG) webhookConfig: WebhookConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    this.secretKey = parseKeyList(webhookConfig.WEBHOOK_SECRETS_KEYS)[0];
  }

  /** Open streams never finish on their own: end them before the server waits for its requests. */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.addHook('preClose', async () => {
      this.closing = true;
      await Promise.all([...this.open].map((session) => session.close()));
    });
  }

  /** Checks everything first: a refused session opens nothing. */
  async start(merchant: MerchantContext, events: unknown): Promise<ListenSession> {
    if (merchant.mode !== 'sandbox') {
      throw Refusal.forbidden(
        'listen streams sandbox events only: use a sandbox API key (live events go to webhook settings)',
      );
    }
    const wanted = parseEvents(events);
    if (this.closing) throw shuttingDown();
    const release = this.hold(merchant.merchantId);
    try {
      return await this.openSession(merchant.merchantId, wanted, release);
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Counts a session of the merchant; throws 429 at the cap. Returns its release (once only). */
  private hold(merchantId: string): () => void {
    const held = this.held.get(merchantId) ?? 0;
    if (held >= LISTEN_SESSIONS_PER_MERCHANT) {
      throw new ApiError(
        ErrorKind.RateLimited,
        `At most ${LISTEN_SESSIONS_PER_MERCHANT} listen streams of a merchant are open at once; close one first`,
        { retryAfter: 5 },
      );
    }
    this.held.set(merchantId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(merchantId) ?? 1) - 1;
      if (left > 0) this.held.set(merchantId, left);
      else this.held.delete(merchantId);
    };
  }

  private async openSession(
    merchantId: string,
    wanted: Set<string> | null,
    release: () => void,
  ): Promise<ListenSession> {
    const consumer = await this.nats.js.consumers.get(this.config.EVENTS_STREAM, {
      filter_subjects: this.nats.subject('>'),
      deliver_policy: DeliverPolicy.New,
    });
    const messages = await consumer.consume();
    // The server began closing while this one waited on NATS: nothing would ever end its stream
    // (the server ends those open when it starts closing), and the shutdown would wait for it.
    if (this.closing) {
      // Not awaited: a close resolves once its messages are read to the end, and none will be.
      void messages.close().catch(() => undefined);
      await consumer.delete().catch(() => undefined);
      throw shuttingDown();
    }
    const signer = {
      id: randomUUID(),
      signingSecret: `whsec_${createHmac('sha256', this.secretKey).update(`listen:${merchantId}`).digest('base64')}`,
    };
    const session: ListenSession = {
      ...signer,
      deliveries: this.deliveries(messages, merchantId, wanted, signer),
      close: async () => {
        if (!this.open.delete(session)) return;
        release();
        await messages.close();
        // Ordered consumers linger for minutes after their reader left: remove it now.
        await consumer.delete().catch(() => undefined);
      },
    };
    this.open.add(session);
    this.logger.log(`listen session ${session.id} opened for merchant ${merchantId}`);
    return session;
  }

  private async *deliveries(
    messages: ConsumerMessages,
    merchantId: string,
    wanted: Set<string> | null,
    session: Pick<ListenSession, 'id' | 'signingSecret'>,
  ): AsyncGenerator<ListenedDelivery> {
    for await (const message of messages) {
      let envelope: EventEnvelope;
      try {
        envelope = parseEnvelope(JSON.parse(message.string()));
      } catch {
        continue; // not an event a webhook would carry either
      }
      if (envelope.merchantId !== merchantId || (wanted && !wanted.has(envelope.type))) continue;
      yield this.asDelivery(envelope, session);
    }
  }

  private asDelivery(
    envelope: EventEnvelope,
    session: Pick<ListenSession, 'id' | 'signingSecret'>,
  ): ListenedDelivery {
    const webhookId = sessionWebhookId(session.id, envelope.id);
    const at = new Date();
    const body = deliveryBody({
      webhookId,
      event: envelope.type,
      paymentMethod: envelope.paymentMethod,
      settingsId: session.id,
      createdAt: at,
      attemptId: randomUUID(),
      content: toPublicContent(envelope.type, envelope.data),
    });
    const headers = deliveryHeaders(
      {
        webhookId,
        signingSecret: session.signingSecret,
        credentialType: 'api-key',
        apiKey: null,
        username: null,
        password: null,
      },
      body,
      at,
    );
    return { id: webhookId, event: envelope.type, headers, body };
  }
}

/**
 * The webhook id an event has in one session: the same for every copy of the event the stream
 * carries (a dead letter replayed, an outbox row published again past the stream's de-duplication
 * window), so a receiver de-duplicating on `webhook-id` handles it once. A UUID of version 8 (RFC
 * 9562, custom) made of SHA-256(session id, event id).
 */
export function sessionWebhookId(sessionId: string, eventId: string): string {
  const hex = createHash('sha256').update(`${sessionId}:${eventId}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** 503: this replica is stopping; the CLI reconnects, to a replica that is not. */
function shuttingDown(): ApiError {
  return new ApiError(ErrorKind.Unavailable, 'This replica is shutting down; open the stream again', {
    retryAfter: 1,
  });
}

/**
 * `events=order.paid,transaction.payment.success` (or the parameter repeated): names of the
 * catalogue; none (or only empty names) = every event. An unknown name is refused, quoted short.
 */
function parseEvents(events: unknown): Set<string> | null {
  if (events === undefined) return null;
  const values: unknown[] = Array.isArray(events) ? events : [events];
  if (!values.every((value): value is string => typeof value === 'string')) {
    throw ApiError.invalidField('events', 'must be comma-separated event names');
  }
  const names = values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) return null;
  const unknown = names.filter((name) => !isEventName(name));
  if (unknown.length > 0) {
    const quoted = unknown.slice(0, 5).map((name) => JSON.stringify(name.slice(0, 64)));
    throw ApiError.invalidField('events', `not events of the catalogue: ${quoted.join(', ')}`);
  }
  return new Set(names);
}
