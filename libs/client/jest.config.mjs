import { jestConfig } from '../../jest.base.mjs';
export default jestConfig({ testTimeout: 60_000 });
