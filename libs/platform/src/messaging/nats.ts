import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { StatelessConfig } from '../config/config.js';

export interface NatsOptions {
  url: string;
  user?: string;
  password?: string;
  name: string;
  /** PEM files: the CA of the servers' certificates, a client certificate and its key (mutual TLS). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

type NatsTlsSettings = Pick<StatelessConfig, 'NATS_TLS_CA_FILE' | 'NATS_TLS_CERT_FILE' | 'NATS_TLS_KEY_FILE'>;
/** What a NATS connection is made from: the services' config, or the CLI's. */
type NatsSettings = NatsTlsSettings & Pick<StatelessConfig, 'NATS_URL' | 'NATS_USER' | 'NATS_PASSWORD'>;

/** NATS_TLS_* as connection options (none set: undefined, the system's CAs). */
function natsTlsFrom(config: NatsTlsSettings): NatsOptions['tls'] {
  const { NATS_TLS_CA_FILE: caFile, NATS_TLS_CERT_FILE: certFile, NATS_TLS_KEY_FILE: keyFile } = config;
  return caFile || certFile || keyFile ? { caFile, certFile, keyFile } : undefined;
}

export function natsOptionsFrom(config: NatsSettings, name: string): NatsOptions {
  return {
    url: config.NATS_URL,
    user: config.NATS_USER,
    password: config.NATS_PASSWORD,
    name,
    tls: natsTlsFrom(config),
  };
}

export async function connectNats(options: NatsOptions): Promise<NatsConnection> {
  return connect({
    servers: options.url,
    name: options.name,
    user: options.user,
    pass: options.password,
    // Given when the servers' certificates need our CA (or they verify ours): else TLS as the
    // server offers it, verified against the system's CAs.
    ...(options.tls ? { tls: options.tls } : {}),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Async stack traces cost a captured stack per request (every JetStream publish); errors still carry their own.
    noAsyncTraces: true,
  });
}

/** The broker handles a service needs: core connection, JetStream, its manager and KV. */
export class NatsContext {
  readonly js: JetStreamClient;

  private constructor(
    readonly nc: NatsConnection,
    readonly jsm: JetStreamManager,
    readonly subjectPrefix: string,
  ) {
    this.js = jetstream(nc);
  }

  static async open(options: NatsOptions, subjectPrefix: string): Promise<NatsContext> {
    const nc = await connectNats(options);
    const jsm = await jetstreamManager(nc);
    return new NatsContext(nc, jsm, subjectPrefix);
  }

  /** The wire subject of an event or RPC name (the subject IS the event name, plus the run prefix). */
  subject(name: string): string {
    return `${this.subjectPrefix}${name}`;
  }

  /** The event name carried by a wire subject. */
  nameOf(subject: string): string {
    return subject.startsWith(this.subjectPrefix) ? subject.slice(this.subjectPrefix.length) : subject;
  }

  /**
   * A KV bucket, created when missing with `replicas` copies (EVENTS_STREAM_REPLICAS: the API keys
   * and merchants are as precious as the events), and an existing one with fewer brought to that
   * many: the library binds to a bucket as it is. Never fewer: a process run with the
   * default of 1 (the CLI on an operator's laptop) must not take production's copies away.
   */
  async kv(bucket: string, replicas = 1): Promise<KV> {
    const kv = await new Kvm(this.nc).create(bucket, { history: 1, replicas });
    const stream = `KV_${bucket}`;
    const info = await this.jsm.streams.info(stream);
    if (info.config.num_replicas < replicas)
      await this.jsm.streams.update(stream, { ...info.config, num_replicas: replicas });
    return kv;
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.drain();
  }
}

/**
 * A KV compare-and-set lost to another writer (`create` of a key that exists, `update` of a revision
 * that is no longer the last): read again and retry.
 */
export function isKvWriteConflict(error: unknown): boolean {
  return /wrong last sequence|key exists/i.test(error instanceof Error ? error.message : String(error));
}
