import { buildApp } from './app.js';
import { loadConfig, type ApiDocsConfig } from './config.js';

let config: ApiDocsConfig;
try {
  config = loadConfig();
} catch (error) {
  console.error((error as Error).message);
  process.exit(1);
}

const app = buildApp(config);
await app.listen({ host: config.host, port: config.port });
app.log.info(
  { services: config.services.map(({ service, url }) => `${service} ${url}`) },
  'merging the documents of',
);

// SIGTERM (Kubernetes) or Ctrl-C: finish what is in flight, then exit 0 within the grace period.
let stopping = false;
function stop(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  app.log.info(`${signal} received: shutting down`);
  setTimeout(() => process.exit(1), config.shutdownGraceMs).unref();
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
