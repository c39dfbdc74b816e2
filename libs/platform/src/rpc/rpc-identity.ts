import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  CompactEncrypt,
  GeneralEncrypt,
  SignJWT,
  compactDecrypt,
  decodeJwt,
  exportJWK,
  generalDecrypt,
  jwtVerify,
  type GeneralJWE,
  type JWK,
} from 'jose';
import type { RpcReply } from '@byrd/contracts';
import { ApiError, ErrorKind } from '../errors/api-error.js';
import { Refusal } from '../errors/refusals.js';

/** A signed request stays valid this long (clock skew included): long enough for a queue, short for a replay. */
const REQUEST_LIFETIME_S = 30;
const CLOCK_TOLERANCE_S = 5;
/**
 * How far ahead of the server's clock a caller's may be. Its exp and jti already bound a request,
 * so a caller a few seconds ahead (an NTP step, a VM resumed) is no risk; refusing it made every
 * call of that service fail.
 */
const FUTURE_ISSUE_TOLERANCE_S = 60;

/** What an authenticated subject carries instead of the bare request. */
export interface SignedRpcRequest {
  /** Compact JWS (EdDSA) of `{ req, rk }`, issued by the caller, audience the subject. */
  jws: string;
}

/**
 * A signed request whose subject carries a card (RPC_SEALED_REQUESTS): the SignedRpcRequest,
 * encrypted to every key its serving service is trusted with (ECDH-ES+A256KW, X25519, A256GCM; a
 * recipient each, so both keys of a rotation can open it).
 */
export interface SealedRpcRequest {
  sealed: GeneralJWE;
}

/** What an authenticated subject answers: the reply encrypted to the caller's reply key. */
export interface SealedRpcReply {
  /** Compact JWE (ECDH-ES, X25519, A256GCM) of a SignedRpcReply. */
  jwe: string;
}

/**
 * The reply, and beside it the same reply signed by the serving service (EdDSA JWS of `{ rep, rid }`,
 * issuer the server, audience the caller, subject the RPC subject, `rid` the request's jti). The
 * caller believes `rep` only; the clear fields keep callers of the release before signed replies
 * working while a rolling upgrade reaches them.
 */
export type SignedRpcReply<T> = RpcReply<T> & { jws?: string };

/** What a caller expects of a reply: who must have signed it, for which of its requests. */
export interface ExpectedRpcReply {
  subject: string;
  server: string;
  requestId: string;
}

/** A reply in clear is believed for the exact request bytes it names (`rpcRequestHashOf`) only. */
export interface ExpectedRpcReplyInClear extends ExpectedRpcReply {
  requestHash: string;
}

/** A request already served: its refusal is never signed (`signRefusal`). */
class ReplayRefusal extends ApiError {}

/** What a server signs of a reply: the reply, the request's id and, for a reply in clear, the request's hash. */
interface ReplyClaims<T> {
  rep?: RpcReply<T>;
  rid?: string;
  rh?: string;
}

export interface VerifiedRpcRequest<T> {
  caller: string;
  request: T;
  replyKey: KeyObject;
  /** The request's jti: its reply names it, so the reply cannot answer another request. */
  requestId: string;
}

/** An Ed25519 key pair as the RPC_* variables hold it: base64 DER (PKCS#8 private, SPKI public). */
export function generateRpcKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
  };
}

/** Short enough never to be a key (an Ed25519 key in base64 is 44 characters or more). */
const LIKE_A_SERVICE_NAME = /^[A-Za-z0-9_.-]{1,40}$/;

/**
 * Parses `name:base64-spki,name:base64-spki`; throws a sentence naming the bad entry by position and
 * name, never by its text (a private key pasted here by mistake must not reach the log). A name may
 * come more than once: each of its keys is trusted, so a rotation publishes the new key beside the
 * old one, switches the signers, then drops the old key, with no moment when either is refused.
 */
export function parseTrustedCallers(list: string): Map<string, KeyObject[]> {
  const callers = new Map<string, KeyObject[]>();
  const entries = list
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  for (const [index, entry] of entries.entries()) {
    const [name, key] = entry.split(':');
    if (!name || !key) throw new Error(`entry ${index + 1} is not name:base64-public-key`);
    try {
      const publicKey = createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
      if (publicKey.asymmetricKeyType !== 'ed25519') throw new Error('not Ed25519');
      callers.set(name, [...(callers.get(name) ?? []), publicKey]);
    } catch {
      const named = LIKE_A_SERVICE_NAME.test(name) ? ` ("${name}")` : '';
      throw new Error(`the key of entry ${index + 1}${named} is not a base64 Ed25519 public key (SPKI DER)`);
    }
  }
  return callers;
}

export function parseSigningKey(base64: string): KeyObject {
  const key = createPrivateKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'pkcs8' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error('must be an Ed25519 private key');
  return key;
}

/**
 * A service's identity on the internal request/reply subjects that carry card data. The caller
 * signs each request (EdDSA JWS naming the subject as audience, 30 s lifetime, unique id) and
 * names a reply key; the server checks the signature against the public keys it trusts, the
 * subject's allowed callers, and replays, then encrypts its answer to the reply key (JWE), so
 * neither another service nor anyone reading the NATS traffic can ask for or read a card.
 */
export class RpcIdentity {
  private readonly replyKeys = generateKeyPairSync('x25519');
  private replyJwk?: Promise<JWK>;
  private readonly seen = new Map<string, number>();
  /** What opens the sealed requests sent to this service: its signing key, as an X25519 key. */
  private readonly openingKey: KeyObject | null;
  private readonly sealingKeys = new Map<string, KeyObject[]>();

  constructor(
    readonly serviceName: string,
    private readonly signingKey: KeyObject | null,
    private readonly trusted: Map<string, KeyObject[]>,
  ) {
    this.openingKey = signingKey && montgomeryPrivateKey(signingKey);
  }

  static fromConfig(
    serviceName: string,
    config: { RPC_SIGNING_KEY?: string; RPC_TRUSTED_CALLERS?: string },
  ): RpcIdentity {
    return new RpcIdentity(
      serviceName,
      config.RPC_SIGNING_KEY ? parseSigningKey(config.RPC_SIGNING_KEY) : null,
      parseTrustedCallers(config.RPC_TRUSTED_CALLERS ?? ''),
    );
  }

  async sign(subject: string, request: unknown): Promise<SignedRpcRequest> {
    if (!this.signingKey) {
      throw new ApiError(
        ErrorKind.Internal,
        `${this.serviceName} has no RPC_SIGNING_KEY, so it cannot call ${subject}`,
      );
    }
    this.replyJwk ??= exportJWK(this.replyKeys.publicKey);
    // One reading of the clock for both claims: read twice across a second's boundary, they were
    // 31 s apart and the server refused the request as signed for too long.
    const issuedAt = Math.floor(Date.now() / 1000);
    const jws = await new SignJWT({ req: request, rk: await this.replyJwk })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer(this.serviceName)
      .setAudience(subject)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + REQUEST_LIFETIME_S)
      .setJti(randomUUID())
      .sign(this.signingKey);
    return { jws };
  }

  /**
   * Encrypts a signed request to the keys `server` is trusted with (RPC_TRUSTED_CALLERS lists every
   * service's keys, servers' too), so only that service can read it.
   */
  async sealFor(server: string, signed: SignedRpcRequest): Promise<SealedRpcRequest> {
    const keys = this.sealingKeysOf(server);
    const encrypt = new GeneralEncrypt(new TextEncoder().encode(signed.jws)).setProtectedHeader({
      enc: 'A256GCM',
    });
    for (const key of keys) encrypt.addRecipient(key).setUnprotectedHeader({ alg: 'ECDH-ES+A256KW' });
    return { sealed: await encrypt.encrypt() };
  }

  /** Checks who sent a request and that it may; throws BYRD403 otherwise. */
  async verify<T>(
    subject: string,
    envelope: unknown,
    allowedCallers: readonly string[],
  ): Promise<VerifiedRpcRequest<T>> {
    const jws = await this.signedOf(subject, envelope);
    if (typeof jws !== 'string') throw Refusal.forbidden(`${subject} takes signed requests only`);
    let payload: { req?: T; rk?: JWK; jti?: string; exp?: number; iat?: number; iss?: string } | undefined;
    const issuer = issuerOf(jws);
    let refusal = new Error(`caller ${String(issuer)} is not trusted`);
    // Each key trusted for the issuer in turn: more than one only while its key is being rotated.
    for (const key of (issuer !== undefined && this.trusted.get(issuer)) || []) {
      try {
        const verified = await jwtVerify<NonNullable<typeof payload>>(jws, key, {
          algorithms: ['EdDSA'],
          audience: subject,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['iss', 'jti', 'exp', 'iat'],
        });
        checkIssuedAt(verified.payload);
        payload = verified.payload;
        break;
      } catch (error) {
        refusal = error as Error;
      }
    }
    if (!payload) {
      throw Refusal.forbidden(`${subject}: the request's signature is not valid (${refusal.message})`);
    }
    const caller = payload.iss!;
    if (!allowedCallers.includes(caller)) throw Refusal.forbidden(`${caller} may not call ${subject}`);
    this.rememberOnce(payload.jti!, payload.exp!);
    if (!payload.rk) throw Refusal.forbidden(`${subject}: the request names no reply key`);
    const replyKey = replyKeyOf(payload.rk);
    if (!replyKey) throw Refusal.forbidden(`${subject}: the request's reply key is not an X25519 public key`);
    return { caller, request: payload.req as T, replyKey, requestId: payload.jti! };
  }

  /** Whether this service can sign (its requests, and its replies on the subjects it serves). */
  get canSign(): boolean {
    return this.signingKey !== null;
  }

  /**
   * The reply to a verified request, signed by this service for that request (when it has a key:
   * without one its callers refuse the reply) and encrypted to the caller's reply key.
   */
  async seal(
    reply: RpcReply<unknown>,
    request: Pick<VerifiedRpcRequest<unknown>, 'caller' | 'replyKey' | 'requestId'>,
    subject: string,
  ): Promise<SealedRpcReply> {
    const signed = await this.signedReply(
      reply,
      { rep: reply, rid: request.requestId },
      request.caller,
      subject,
    );
    const jwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(signed)))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM' })
      .encrypt(request.replyKey);
    return { jwe };
  }

  /**
   * A refusal of a request this service could not verify (`verify` threw), answered in clear: signed
   * for the request's jti and the hash of its exact bytes when they can be read, so its caller
   * believes it at once, while another client of the broker cannot make a call fail with one. A copy
   * of the caller's own request gets the same verdict, except a replay, which stays unsigned: a
   * client that resent a request first must not have the caller's own refused for it.
   */
  async signRefusal(
    subject: string,
    data: Uint8Array,
    refusal: RpcReply<never>,
    failure: unknown,
  ): Promise<SignedRpcReply<never>> {
    if (failure instanceof ReplayRefusal) return refusal;
    let claims: { iss?: unknown; jti?: unknown };
    try {
      const jws = await this.signedOf(subject, JSON.parse(new TextDecoder().decode(data)));
      claims = typeof jws === 'string' ? decodeJwt(jws) : {};
    } catch {
      return refusal; // nothing to name it by: the caller takes it only when nothing signed comes
    }
    if (typeof claims.iss !== 'string' || typeof claims.jti !== 'string') return refusal;
    return this.signInClear(refusal, { caller: claims.iss, requestId: claims.jti, data }, subject);
  }

  /**
   * A reply in clear, signed by this service for one request: its id and the hash of its exact bytes
   * (so a client that sent other bytes under the same id gets nothing the caller believes). The
   * refusals of `signRefusal`, and the replies of subjects whose requests are not signed (their
   * callers name each request in headers: RPC_REQUEST_ID_HEADER, RPC_CALLER_HEADER of contracts).
   */
  signInClear<T>(
    reply: RpcReply<T>,
    request: { caller: string; requestId: string; data: Uint8Array },
    subject: string,
  ): Promise<SignedRpcReply<T>> {
    const claims = { rep: reply, rid: request.requestId, rh: rpcRequestHashOf(request.data) };
    return this.signedReply(reply, claims, request.caller, subject);
  }

  /**
   * Opens a reply sealed to this service and takes it only when `expected.server` signed it for
   * this very request: anyone may seal to the reply key (it is in clear in an unsealed request),
   * and any client of the broker may answer a request.
   */
  async open<T>(sealed: SealedRpcReply, expected: ExpectedRpcReply): Promise<RpcReply<T>> {
    let signed: SignedRpcReply<T>;
    try {
      const { plaintext } = await compactDecrypt(sealed.jwe, this.replyKeys.privateKey);
      signed = JSON.parse(new TextDecoder().decode(plaintext)) as SignedRpcReply<T>;
    } catch {
      throw new Error(`${expected.subject}: the reply is not sealed to this service`);
    }
    const claims = await this.believed(signed, expected);
    if (claims.rid !== expected.requestId || !claims.rep) {
      throw new Error(`${expected.subject}: the reply answers another request`);
    }
    return claims.rep;
  }

  /**
   * A reply in clear, taken only when `expected.server` signed it for this very request, its exact
   * bytes included (`signInClear`): what it signed, not the clear fields beside it.
   */
  async openInClear<T>(reply: SignedRpcReply<T>, expected: ExpectedRpcReplyInClear): Promise<RpcReply<T>> {
    const claims = await this.believed(reply, expected);
    if (claims.rid !== expected.requestId || claims.rh !== expected.requestHash || !claims.rep) {
      throw new Error(`${expected.subject}: the reply answers another request`);
    }
    return claims.rep;
  }

  /** The claims of a reply's signature, when one of `expected.server`'s keys made it for this service. */
  private async believed<T>(signed: SignedRpcReply<T>, expected: ExpectedRpcReply): Promise<ReplyClaims<T>> {
    if (typeof signed.jws !== 'string') {
      throw new Error(`${expected.subject}: the reply is not signed (by ${expected.server})`);
    }
    let refusal = new Error(`${expected.server} is not in RPC_TRUSTED_CALLERS`);
    for (const key of this.trusted.get(expected.server) ?? []) {
      try {
        const { payload } = await jwtVerify<ReplyClaims<T>>(signed.jws, key, {
          algorithms: ['EdDSA'],
          issuer: expected.server,
          audience: this.serviceName,
          subject: expected.subject,
        });
        return payload;
      } catch (error) {
        refusal = error as Error;
      }
    }
    throw new Error(
      `${expected.subject}: the reply is not signed by ${expected.server} (${refusal.message})`,
    );
  }

  /** A reply and beside it its claims signed by this service for `caller` (unsigned without a key). */
  private async signedReply<T>(
    reply: RpcReply<T>,
    claims: ReplyClaims<T>,
    caller: string,
    subject: string,
  ): Promise<SignedRpcReply<T>> {
    if (!this.signingKey) return { ...reply };
    const jws = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer(this.serviceName)
      .setAudience(caller)
      .setSubject(subject)
      .setIssuedAt()
      .sign(this.signingKey);
    return { ...reply, jws };
  }

  /** The compact JWS an envelope carries, opened first when it came sealed to this service. */
  private async signedOf(subject: string, envelope: unknown): Promise<unknown> {
    const sealed = (envelope as Partial<SealedRpcRequest> | null)?.sealed;
    // A signed request in clear is still taken on a sealed subject: a caller of the release before
    // sealed requests keeps working while a rolling upgrade reaches it (servers first).
    if (sealed === undefined) return (envelope as Partial<SignedRpcRequest> | null)?.jws;
    if (!this.openingKey)
      throw Refusal.forbidden(`${subject}: this service has no key to open sealed requests`);
    try {
      const { plaintext } = await generalDecrypt(sealed, this.openingKey);
      return new TextDecoder().decode(plaintext);
    } catch {
      throw Refusal.forbidden(`${subject}: the request is not sealed to this service's key`);
    }
  }

  private sealingKeysOf(server: string): KeyObject[] {
    let keys = this.sealingKeys.get(server);
    if (!keys) {
      keys = (this.trusted.get(server) ?? []).map(montgomeryPublicKey);
      if (keys.length === 0) {
        throw new ApiError(
          ErrorKind.Internal,
          `${this.serviceName} has no key of ${server} in RPC_TRUSTED_CALLERS to seal its requests to`,
        );
      }
      this.sealingKeys.set(server, keys);
    }
    return keys;
  }

  /** A request id is accepted once while it is valid: a copied request cannot be replayed. */
  private rememberOnce(jti: string, expiresAtS: number): void {
    // Ids come about in the order they expire (each lives REQUEST_LIFETIME_S from its signing), so
    // the expired ones are at the front: forgetting them stops at the first live one. (A sweep of
    // the whole map once it held 10,000 walked every live id on every call past ~300 calls/s.)
    const now = Date.now();
    for (const [id, until] of this.seen) {
      if (until >= now) break;
      this.seen.delete(id);
    }
    if (this.seen.has(jti)) {
      throw new ReplayRefusal(ErrorKind.Forbidden, 'this request was already served (replay)', {
        code: 'BYRD403',
      });
    }
    this.seen.set(jti, (expiresAtS + CLOCK_TOLERANCE_S) * 1000);
  }
}

/** The hash a reply signed in clear names of its request: SHA-256 of the request's bytes, base64url. */
export function rpcRequestHashOf(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('base64url');
}

/** The id (jti) of a request this service signed: its reply must name it. */
export function rpcRequestIdOf(signed: SignedRpcRequest): string {
  return decodeJwt(signed.jws).jti!;
}

/**
 * A request lives REQUEST_LIFETIME_S from its signing, by the caller's clock: refused when signed
 * for longer, too long ago, or further ahead of this clock than FUTURE_ISSUE_TOLERANCE_S.
 */
function checkIssuedAt({ iat, exp }: { iat?: number; exp?: number }): void {
  const now = Math.floor(Date.now() / 1000);
  if (exp! - iat! > REQUEST_LIFETIME_S)
    throw new Error(`it is signed for longer than ${REQUEST_LIFETIME_S} s`);
  if (now - iat! > REQUEST_LIFETIME_S + CLOCK_TOLERANCE_S) throw new Error('"iat" is too far in the past');
  if (iat! - now > FUTURE_ISSUE_TOLERANCE_S) throw new Error('"iat" is too far in the future');
}

/** The issuer a compact JWS names, unverified (it picks the keys to verify it with). */
function issuerOf(jws: string): string | undefined {
  try {
    return decodeJwt(jws).iss;
  } catch {
    return undefined;
  }
}

function replyKeyOf(jwk: JWK): KeyObject | null {
  try {
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
    return key.asymmetricKeyType === 'x25519' ? key : null;
  } catch {
    return null;
  }
}

/**
 * An Ed25519 key's X25519 twin (RFC 7748's birational map, as libsodium's
 * crypto_sign_ed25519_sk_to_curve25519 does): a service's one RPC key pair both signs its requests
 * and opens the sealed ones sent to it, so no second key has to be generated, listed and rotated.
 */
function montgomeryPrivateKey(signingKey: KeyObject): KeyObject {
  const { d, x } = signingKey.export({ format: 'jwk' });
  const secret = ed25519.utils.toMontgomerySecret(Buffer.from(d!, 'base64url'));
  const publicKey = ed25519.utils.toMontgomery(Buffer.from(x!, 'base64url'));
  return createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'X25519',
      d: Buffer.from(secret).toString('base64url'),
      x: Buffer.from(publicKey).toString('base64url'),
    },
    format: 'jwk',
  });
}

function montgomeryPublicKey(verifyingKey: KeyObject): KeyObject {
  const { x } = verifyingKey.export({ format: 'jwk' });
  const publicKey = ed25519.utils.toMontgomery(Buffer.from(x!, 'base64url'));
  return createPublicKey({
    key: { kty: 'OKP', crv: 'X25519', x: Buffer.from(publicKey).toString('base64url') },
    format: 'jwk',
  });
}
