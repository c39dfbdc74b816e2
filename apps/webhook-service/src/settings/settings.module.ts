import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module.js';
import { EgressModule } from '../egress/egress.module.js';
import { SecretsModule } from '../secrets/settings-secrets.js';
import { SettingsController } from './settings.controller.js';
import { CreateSettings, DeleteSettings, GetSettings, ListSettings } from './settings.usecases.js';

@Module({
  imports: [EgressModule, SecretsModule, DeliveryModule],
  controllers: [SettingsController],
  providers: [CreateSettings, ListSettings, GetSettings, DeleteSettings],
})
export class SettingsModule {}
