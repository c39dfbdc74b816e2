// Shared Jest setup: ESM + SWC (decorators and their metadata on), workspace packages read from source.
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = path.dirname(fileURLToPath(import.meta.url));

const REQUIRED_ESM = ['content-disposition'];

/** @returns {import('jest').Config} */
export function jestConfig({ testMatch, testTimeout = 20_000, ...rest } = {}) {
  return {
    testEnvironment: 'node',
    extensionsToTreatAsEsm: ['.ts'],
    testMatch: testMatch ?? [
      '<rootDir>/src/**/*.spec.ts',
      // Medium tests: real PostgreSQL with the service's migrations, no HTTP (MediumDatabase).
      '<rootDir>/test/**/*.medium-spec.ts',
      '<rootDir>/test/**/*.e2e-spec.ts',
    ],
    testTimeout,
    // A suite that fails in beforeAll can leave broker connections open; never let that hang CI.
    forceExit: true,
    // ESM-only packages that CommonJS dependencies require(): compiled to CommonJS for Jest's loader
    // (Node itself loads them natively).
    transformIgnorePatterns: [`/node_modules/(?!(${REQUIRED_ESM.join('|')})/)`],
    transform: {
      [`/node_modules/(${REQUIRED_ESM.join('|')})/.+\\.js$`]: [
        '@swc/jest',
        { jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' }, module: { type: 'commonjs' } },
      ],
      '^.+\\.ts$': [
        '@swc/jest',
        {
          jsc: {
            parser: { syntax: 'typescript', decorators: true },
            transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
            target: 'es2022',
            keepClassNames: true,
          },
          module: { type: 'es6' },
          sourceMaps: 'inline',
        },
      ],
    },
    moduleNameMapper: {
      '^@byrd/contracts$': path.join(root, 'libs/contracts/src/index.ts'),
      '^@byrd/platform$': path.join(root, 'libs/platform/src/index.ts'),
      '^@byrd/platform/testing$': path.join(root, 'libs/platform/src/testing/index.ts'),
      '^@byrd/platform/testing/chromium$': path.join(root, 'libs/platform/src/testing/chromium.ts'),
      // The services other services' tests run beside their own, through their public entry.
      '^@byrd/(gateway-tokens|orders|payments)$': path.join(root, 'apps/$1/src/index.ts'),
      '^(\\.{1,2}/.*)\\.js$': '$1',
    },
    ...rest,
  };
}
