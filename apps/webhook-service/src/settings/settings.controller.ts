import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  CreateWebhookSettingsRequest,
  DeleteWebhookSettingsAnswer,
  WebhookSettingsAnswer,
  WebhookSettingsListAnswer,
  type DeleteWebhookSettingsResponse,
  type WebhookSettingsListResponse,
  type WebhookSettingsResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  GuidParam,
  AnswerHoldsSecrets,
  IDEMPOTENCY_HEADER,
  keyClaimOf,
  NOT_FOUND,
  type AuthenticatedRequest,
  type MerchantContext,
} from '@byrd/platform';
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
  @AnswerHoldsSecrets()
  @ApiOperation({
    summary:
      'Subscribe a URL to events. Missing credentials are generated; the answer carries the signing secret (only here).',
    description:
      'A merchant may keep a limited number of settings (100 by default; deleted ones do not count). ' +
      'Past it the create is refused with 422 BYRD205, not kept under its idempotency-key, until a setting is deleted.',
  })
  @ApiCreatedResponse({ type: WebhookSettingsAnswer })
  // BYRD205: the merchant already has WEBHOOK_SETTINGS_MAX_PER_MERCHANT live settings.
  @ApiErrors({ 422: ['BYRD205'] })
  create(
    @CurrentMerchant() merchant: MerchantContext,
    @Body() body: CreateWebhookSettingsRequest,
    @Headers(IDEMPOTENCY_HEADER) idempotencyKey?: string,
  ): Promise<WebhookSettingsResponse> {
    return this.createSettings.execute(merchant, body, idempotencyKey);
  }

  @Get()
  @ApiOperation({ summary: 'List the webhook settings, most recent first' })
  @ApiOkResponse({ type: WebhookSettingsListAnswer })
  list(@CurrentMerchant() merchant: MerchantContext): Promise<WebhookSettingsListResponse> {
    return this.listSettings.execute(merchant);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read one webhook setting' })
  @ApiOkResponse({ type: WebhookSettingsAnswer })
  @ApiErrors(NOT_FOUND)
  read(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('id', GuidParam.notFound('Webhook settings')) id: string,
  ): Promise<WebhookSettingsResponse> {
    return this.getSettings.execute(merchant, id);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a webhook setting; its pending retries are canceled' })
  @ApiOkResponse({ type: DeleteWebhookSettingsAnswer })
  @ApiErrors(NOT_FOUND)
  remove(
    @Req() request: AuthenticatedRequest,
    @CurrentMerchant() merchant: MerchantContext,
    @Param('id', GuidParam.notFound('Webhook settings')) id: string,
  ): Promise<DeleteWebhookSettingsResponse> {
    return this.deleteSettings.execute(merchant, id, keyClaimOf(request));
  }
}
