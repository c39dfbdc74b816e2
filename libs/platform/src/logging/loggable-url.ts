import { containsCardNumber } from '@byrd/contracts';

const CENSOR = '[REDACTED]';

/**
 * Query parameters whose value is a credential: an order's `checkoutKey` (it lets a browser pay
 * that order), and any API key, token, secret, password, signature or session a caller sends there.
 */
const CREDENTIAL_PARAMETER = /key|token|secret|passw|signature|auth|session|credential/i;

/** `text` percent-decoded (`+` is a space in a query), or undefined when it does not decode. */
function decoded(text: string, plusIsSpace: boolean): string | undefined {
  const spaced = plusIsSpace ? text.replaceAll('+', ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return undefined;
  }
}

const holdsCardNumber = (text: string, plusIsSpace = false) =>
  containsCardNumber(decoded(text, plusIsSpace) ?? text);

/** The path with each segment that holds a card number censored. */
function loggablePath(path: string): string {
  // One look at the whole path first (a digit run never spans a "/"): most hold no card number.
  const whole = decoded(path, false);
  if (whole !== undefined && !containsCardNumber(whole)) return path;
  return path
    .split('/')
    .map((segment) => (holdsCardNumber(segment) ? CENSOR : segment))
    .join('/');
}

/**
 * A request URL as logs and spans may hold it: the path with every segment that holds a card
 * number censored (`GET /api/v2/tokens/4111…` is answered 400, but the path was typed), and the
 * query with the values of credential parameters and of any holding a card number censored. The
 * parameter names stay, so a line still says what was asked.
 */
export function loggableUrl(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return loggablePath(url);
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equalsAt = pair.indexOf('=');
      const rawName = equalsAt < 0 ? pair : pair.slice(0, equalsAt);
      if (holdsCardNumber(rawName, true)) return CENSOR;
      if (equalsAt < 0) return pair;
      const sensitive =
        CREDENTIAL_PARAMETER.test(decoded(rawName, true) ?? rawName) ||
        holdsCardNumber(pair.slice(equalsAt + 1), true);
      return sensitive ? `${rawName}=${CENSOR}` : pair;
    });
  return `${loggablePath(url.slice(0, queryAt))}?${query.join('&')}`;
}
