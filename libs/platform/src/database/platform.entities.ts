import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An event written in the same transaction as the state change it announces; the relay publishes it
 * and deletes the row once JetStream has acknowledged it, so every row here is pending.
 */
@Entity({ name: 'outbox' })
export class OutboxMessage {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  seq: string;

  /** The event id: the JetStream msgID, so a re-publish is de-duplicated by the server. */
  @Column({ type: 'uuid' })
  id: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'jsonb' })
  payload: unknown;

  /** The W3C trace context of the work that wrote the event: sent with it as a NATS header. */
  @Column({ type: 'text', nullable: true })
  traceparent: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Events a consumer has handled; inserted in the handler's transaction so a redelivery is a no-op. */
@Entity({ name: 'inbox' })
export class InboxMessage {
  @PrimaryColumn({ type: 'text' })
  consumer: string;

  @PrimaryColumn({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ type: 'text' })
  subject: string;

  @CreateDateColumn({ name: 'handled_at', type: 'timestamptz' })
  handledAt: Date;
}

/** A message that can never be handled, kept for an operator instead of being retried forever. */
@Entity({ name: 'dead_letters' })
export class DeadLetter {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  consumer: string;

  @Column({ type: 'text' })
  subject: string;

  @Column({ type: 'text' })
  payload: string;

  @Column({ type: 'text' })
  error: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** The first answer to a POST with an `idempotency-key`, replayed to repeats for 24 hours. */
@Entity({ name: 'idempotency_keys' })
export class IdempotencyRecord {
  @PrimaryColumn({ name: 'merchant_id', type: 'text' })
  merchantId: string;

  @PrimaryColumn({ type: 'text' })
  key: string;

  @Column({ name: 'request_hash', type: 'text' })
  requestHash: string;

  /** Null while the first request is still running. */
  @Column({ name: 'response_status', type: 'int', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'jsonb', nullable: true })
  responseBody: unknown;

  /** The request holding the key while it runs; null once answered. */
  @Column({ name: 'lease_owner', type: 'uuid', nullable: true })
  leaseOwner: string | null;

  /** Until when the running request holds the key (renewed while it runs). */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export const PLATFORM_ENTITIES = [OutboxMessage, InboxMessage, DeadLetter, IdempotencyRecord];
