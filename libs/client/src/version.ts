/** This package's version (package.json's; a test keeps them equal), sent in the user-agent. */
export const CLIENT_VERSION = '0.1.0';
