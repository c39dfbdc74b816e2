import { jestConfig } from '../../jest.base.mjs';
export default jestConfig({ testTimeout: 30_000 });
