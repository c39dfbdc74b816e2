import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '@byrd/platform';

/**
 * `dist/web` of this package, where `vite build` puts the page (beside the compiled server, so the
 * image carries it): two levels up from this file in both the src/ and dist/ layouts.
 */
export const DEFAULT_WEB_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web');

/**
 * The built page's directory (HOSTED_FORM_WEB_DIR or dist/web). Without its index.html the service
 * has nothing to show shoppers, so it does not start.
 */
export function resolveWebDir(configured: string | undefined): string {
  const dir = path.resolve(configured ?? DEFAULT_WEB_DIR);
  if (!existsSync(path.join(dir, 'index.html'))) {
    throw new ConfigError(
      `Cannot start: the hosted form's page is not built (${path.join(dir, 'index.html')} is missing). ` +
        `Run "npm run build -w @byrd/hosted-form-bff"${configured ? ' or fix HOSTED_FORM_WEB_DIR' : ''}.`,
    );
  }
  return dir;
}
