import { jestConfig } from '../../jest.base.mjs';
// The process test waits for a cold start on a busy machine.
export default jestConfig({ testTimeout: 60_000 });
