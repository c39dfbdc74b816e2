import { Module } from '@nestjs/common';
import { PurgeWebhooks } from './purge-webhooks.usecase.js';

@Module({ providers: [PurgeWebhooks] })
export class RetentionModule {}
