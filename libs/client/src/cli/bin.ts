#!/usr/bin/env node
// `byrd`: the merchant CLI of @byrd/client (listen, trigger). Ctrl-C ends `listen`.
import { runCli } from './main.js';

const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());
process.exitCode = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  signal: stop.signal,
});
