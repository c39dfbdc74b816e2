import { CardToken } from './tokens/card-token.entity.js';
import { Tokens1764300000000 } from './migrations/1764300000000-tokens.js';
import { TokenAnswersIndex1765300000200 } from './migrations/1765300000200-token-answers-index.js';
import { TokenAnswersOutliveNoToken1765600000000 } from './migrations/1765600000000-token-answers-outlive-no-token.js';
import { KekRotationIndex1765800000000 } from './migrations/1765800000000-kek-rotation-index.js';
import { StagedCardRefresh1766100000000 } from './migrations/1766100000000-staged-card-refresh.js';
import { TokenVerifiedAt1766200000000 } from './migrations/1766200000000-token-verified-at.js';
import { TokenListIndex1766300000000 } from './migrations/1766300000000-token-list-index.js';
import { CardDeletions1766400000000 } from './migrations/1766400000000-card-deletions.js';

export const TOKENS_ENTITIES = [CardToken];
export const TOKENS_MIGRATIONS = [
  Tokens1764300000000,
  TokenAnswersIndex1765300000200,
  TokenAnswersOutliveNoToken1765600000000,
  KekRotationIndex1765800000000,
  StagedCardRefresh1766100000000,
  TokenVerifiedAt1766200000000,
  TokenListIndex1766300000000,
  CardDeletions1766400000000,
];
