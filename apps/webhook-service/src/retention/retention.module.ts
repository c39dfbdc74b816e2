import { Module } from '@nestjs/common';
import { ExpireHeldWebhooks } from './expire-held-webhooks.usecase.js';
import { PurgeWebhooks } from './purge-webhooks.usecase.js';

@Module({ providers: [PurgeWebhooks, ExpireHeldWebhooks] })
export class RetentionModule {}
