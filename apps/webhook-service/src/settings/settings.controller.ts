import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreateWebhookSettingsRequest } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
import { CreateSettings, DeleteSettings, GetSettings, ListSettings } from './settings.usecases.js';

@ApiTags('webhook settings')
@Controller('api/v1/settings')
export class SettingsController {
  constructor(
    private readonly createSettings: CreateSettings,
    private readonly listSettings: ListSettings,
    private readonly getSettings: GetSettings,
    private readonly deleteSettings: DeleteSettings,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary:
      'Subscribe a URL to events. Missing credentials are generated; the answer carries the signing secret (only here).',
  })
  create(@CurrentMerchant() merchant: MerchantContext, @Body() body: CreateWebhookSettingsRequest) {
    return this.createSettings.execute(merchant, body);
  }

  @Get()
  @ApiOperation({ summary: 'List the webhook settings, most recent first' })
  list(@CurrentMerchant() merchant: MerchantContext) {
    return this.listSettings.execute(merchant);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read one webhook setting' })
  read(@CurrentMerchant() merchant: MerchantContext, @Param('id') id: string) {
    return this.getSettings.execute(merchant, id);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a webhook setting; its pending retries are canceled' })
  remove(@CurrentMerchant() merchant: MerchantContext, @Param('id') id: string) {
    return this.deleteSettings.execute(merchant, id);
  }
}
