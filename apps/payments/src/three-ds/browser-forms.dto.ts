// Form posts (application/x-www-form-urlencoded) the 3DS pages receive from browsers.
import { IsIn, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

const MAX_MESSAGE = 4096;

/** The 3DS Method iframe's post to the issuer (`dsMethodUrl`). */
export class MethodForm {
  /** base64 JSON `{ threeDSServerTransID, threeDSMethodNotificationURL }`. */
  @IsString()
  @MaxLength(MAX_MESSAGE)
  threeDSMethodData: string;
}

/** The challenge iframe's post to the issuer (`challengeUrl`). */
export class ChallengeRequestForm {
  /** base64 JSON ChallengeRequestMessage. */
  @IsString()
  @MaxLength(MAX_MESSAGE)
  creq: string;
}

/** The shopper's answer on the challenge page. */
export class ChallengeAnswerForm {
  @IsUUID()
  threeDSServerTransID: string;

  @IsOptional()
  @IsString()
  @MaxLength(32)
  otp?: string;

  /** Which button: Enter in the code field submits. */
  @IsOptional()
  @IsIn(['submit', 'cancel'])
  action?: 'submit' | 'cancel';
}

/** What the issuer posts back to our 3DS server's notification URL. */
export class NotificationForm {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_MESSAGE)
  threeDSMethodData?: string;

  @IsOptional()
  @IsString()
  @MaxLength(MAX_MESSAGE)
  cres?: string;
}
