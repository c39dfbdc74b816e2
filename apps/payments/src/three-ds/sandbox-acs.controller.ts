import { Body, Controller, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public, TakesFormPosts } from '@byrd/platform';
import { ChallengeAnswerForm, ChallengeRequestForm, MethodForm } from './browser-forms.dto.js';
import { PageErrorFilter } from './page-error.filter.js';
import { challengeEndPage, challengeStepPage, methodPage } from './pages/acs-pages.js';
import { sendPage } from './pages/html.js';
import { SandboxAcs } from './sandbox-acs.usecase.js';

/** The sandbox issuer's pages (HTML forms inside the SDK's iframes), not part of the merchant API. */
@ApiExcludeController()
@Public()
@UseFilters(PageErrorFilter)
@Controller('3ds/acs')
export class SandboxAcsController {
  constructor(private readonly acs: SandboxAcs) {}

  @Post('method')
  @TakesFormPosts()
  method(@Body() form: MethodForm, @Res() reply: FastifyReply): void {
    sendPage(reply, methodPage(this.acs.runMethod(form.threeDSMethodData)));
  }

  @Post('challenge')
  @TakesFormPosts()
  async challenge(@Body() form: ChallengeRequestForm, @Res() reply: FastifyReply): Promise<void> {
    sendPage(reply, challengeStepPage(await this.acs.openChallenge(form.creq)));
  }

  @Post('challenge/:acsTransId')
  @TakesFormPosts()
  async answer(
    @Param('acsTransId') acsTransId: string,
    @Body() form: ChallengeAnswerForm,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendPage(reply, challengeEndPage(await this.acs.answer(form.threeDSServerTransID, acsTransId, form)));
  }
}
