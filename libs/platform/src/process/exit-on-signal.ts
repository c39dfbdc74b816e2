/**
 * Until the returned remover is called, SIGTERM/SIGINT end the process at once (exit 1), logging
 * `${signal} received ${during}; exiting`. As PID 1 in a container node ignores a signal it has no
 * handler for: a service still starting (a database that never answers) or a migration Job could
 * otherwise only be killed when Kubernetes' grace ran out.
 */
export function exitOnSignal(during: string): () => void {
  const exit = (signal: NodeJS.Signals) => {
    console.error(`${signal} received ${during}; exiting`);
    process.exit(1);
  };
  process.once('SIGTERM', exit);
  process.once('SIGINT', exit);
  return () => {
    process.off('SIGTERM', exit);
    process.off('SIGINT', exit);
  };
}
