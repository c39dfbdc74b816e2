import { execFileSync } from 'node:child_process';

/** The data of databases as text (`pg_dump --data-only`), for a search for card data. */
export function dumpDatabases(urls: string[]): string {
  return urls
    .map((url) => execFileSync('pg_dump', ['--data-only', '--no-owner', url], { encoding: 'utf8' }))
    .join('\n');
}

/**
 * What an auditor looking for PCI DSS requirement 3 would flag: each card number, and each CVV next
 * to the word "cvv", found in the text of a place (database dump, logs, events). Empty when clean.
 */
export function cardDataLeaks(places: Record<string, string>, numbers: string[], cvvs: string[]): string[] {
  const leaks: string[] = [];
  for (const [place, text] of Object.entries(places)) {
    for (const number of numbers) if (text.includes(number)) leaks.push(`${place}: card ${number}`);
    for (const cvv of cvvs)
      if (new RegExp(`cvv\\W{0,6}${cvv}`, 'i').test(text)) leaks.push(`${place}: CVV ${cvv}`);
  }
  return leaks;
}
