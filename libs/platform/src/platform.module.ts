import {
  Inject,
  Module,
  type CanActivate,
  type DynamicModule,
  type OnApplicationShutdown,
  type Type,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LoggerModule } from 'nestjs-pino';
import type { KV } from '@nats-io/kv';
import type { BaseConfig, StatelessConfig } from './config/config.js';
import { dataSourceOptions, type DatabaseOptions } from './database/data-source.js';
import { loggerParams } from './logging/logging.js';
import { ApiExceptionFilter } from './errors/exception.filter.js';
import { createValidationPipe } from './errors/validation.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { ApiKeyRegistry } from './auth/api-key.registry.js';
import { MerchantDirectory } from './auth/merchants.js';
import { HealthController } from './health/health.controller.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { ServiceMetrics } from './metrics/service-metrics.js';
import { IdempotencyGuard } from './idempotency/idempotency.guard.js';
import { NatsContext, natsOptionsFrom } from './messaging/nats.js';
import { ensureEventsStream } from './messaging/streams.js';
import { Outbox } from './messaging/outbox.js';
import { EventConsumers } from './messaging/consumers.js';
import { Rpc } from './rpc/rpc.js';
import {
  API_KEYS_KV,
  NATS_CONTEXT,
  PLATFORM_CONFIG,
  RPC_IDENTITY,
  RUNS_IDEMPOTENCY,
  SERVICE_NAME,
} from './messaging/tokens.js';
import { RpcIdentity } from './rpc/rpc-identity.js';

interface CommonPlatformOptions {
  serviceName: string;
  /** Also provides the service's full config under this token, to every module. */
  configToken?: symbol;
  /**
   * Global guards of the service's own, run after the API key's and before the idempotency-key is
   * claimed: a request they refuse (a rate limit) has written nothing.
   */
  guards?: Type<CanActivate>[];
}

/** A service with its own database (outbox, durable consumers and idempotency included). */
interface DatabasePlatformOptions extends CommonPlatformOptions {
  config: BaseConfig;
  entities: DatabaseOptions['entities'];
  migrations: DatabaseOptions['migrations'];
}

/**
 * A service that keeps no data (the hosted form's backend): no database, hence no outbox, no
 * durable consumers and no idempotency store; readiness checks NATS only.
 */
interface StatelessPlatformOptions extends CommonPlatformOptions {
  config: StatelessConfig;
  database: false;
}

export type PlatformOptions = DatabasePlatformOptions | StatelessPlatformOptions;

/** Closes the broker connection last, after every consumer and RPC handler has drained. */
class NatsLifecycle implements OnApplicationShutdown {
  constructor(@Inject(NATS_CONTEXT) private readonly nats: NatsContext) {}
  async onApplicationShutdown(): Promise<void> {
    await this.nats.close();
  }
}

/**
 * Everything a service stands on: config, logging, errors, API-key auth, health, the database,
 * NATS (outbox relay, durable consumers, RPC) and idempotency. Imported once by each app module.
 */
@Module({})
export class PlatformModule {
  static forRoot(options: PlatformOptions): DynamicModule {
    const { config, serviceName } = options;
    const database = 'database' in options ? null : options;
    const databaseProviders = database ? [Outbox, EventConsumers, IdempotencyGuard] : [];
    return {
      module: PlatformModule,
      global: true,
      imports: [
        LoggerModule.forRoot(loggerParams(serviceName, config.LOG_LEVEL, config.LOG_FORMAT)),
        ...(database
          ? [
              TypeOrmModule.forRoot(
                dataSourceOptions({
                  url: database.config.DATABASE_URL,
                  poolSize: database.config.DATABASE_POOL_SIZE,
                  statementTimeoutMs: database.config.DATABASE_STATEMENT_TIMEOUT_MS,
                  entities: database.entities,
                  migrations: database.migrations,
                }),
              ),
            ]
          : []),
      ],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: PLATFORM_CONFIG, useValue: config },
        ...(options.configToken ? [{ provide: options.configToken, useValue: config }] : []),
        { provide: SERVICE_NAME, useValue: serviceName },
        { provide: RUNS_IDEMPOTENCY, useValue: database !== null },
        {
          provide: NATS_CONTEXT,
          useFactory: async () => {
            const nats = await NatsContext.open(
              natsOptionsFrom(config, serviceName),
              config.NATS_SUBJECT_PREFIX,
            );
            await ensureEventsStream(
              nats.jsm,
              config.EVENTS_STREAM,
              config.NATS_SUBJECT_PREFIX,
              config.EVENTS_STREAM_REPLICAS,
            );
            return nats;
          },
        },
        {
          provide: API_KEYS_KV,
          useFactory: (nats: NatsContext) => nats.kv(config.API_KEYS_BUCKET, config.EVENTS_STREAM_REPLICAS),
          inject: [NATS_CONTEXT],
        },
        {
          provide: MerchantDirectory,
          useFactory: async (nats: NatsContext, apiKeys: KV) =>
            new MerchantDirectory(
              await nats.kv(config.MERCHANTS_BUCKET, config.EVENTS_STREAM_REPLICAS),
              apiKeys,
            ),
          inject: [NATS_CONTEXT, API_KEYS_KV],
        },
        { provide: RPC_IDENTITY, useFactory: () => RpcIdentity.fromConfig(serviceName, config) },
        NatsLifecycle,
        ServiceMetrics,
        ApiKeyRegistry,
        Rpc,
        ...databaseProviders,
        // In this order: the key's claim needs the merchant the API key names.
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        ...(options.guards ?? []).map((guard) => ({ provide: APP_GUARD, useClass: guard })),
        ...(database ? [{ provide: APP_GUARD, useExisting: IdempotencyGuard }] : []),
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
      exports: [
        ...(options.configToken ? [options.configToken] : []),
        PLATFORM_CONFIG,
        SERVICE_NAME,
        NATS_CONTEXT,
        API_KEYS_KV,
        MerchantDirectory,
        ApiKeyRegistry,
        Rpc,
        ServiceMetrics,
        ...(database ? [Outbox, EventConsumers] : []),
      ],
    };
  }
}
