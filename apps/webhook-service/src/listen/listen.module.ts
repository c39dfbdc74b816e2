import { Module } from '@nestjs/common';
import { ListenController } from './listen.controller.js';
import { ListenSessions } from './listen-sessions.js';

/** `GET /api/v1/webhooks/listen`: a developer's live stream of signed deliveries (sandbox). */
@Module({
  controllers: [ListenController],
  providers: [ListenSessions],
})
export class ListenModule {}
