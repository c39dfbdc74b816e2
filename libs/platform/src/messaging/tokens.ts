/** Injection tokens of the broker handles. */
export const NATS_CONTEXT = Symbol('NATS_CONTEXT');
export const API_KEYS_KV = Symbol('API_KEYS_KV');
export const PLATFORM_CONFIG = Symbol('PLATFORM_CONFIG');
export const SERVICE_NAME = Symbol('SERVICE_NAME');
/** The service's RpcIdentity, for the authenticated RPC subjects. */
export const RPC_IDENTITY = Symbol('RPC_IDENTITY');
/** Whether the service answers its POSTs through the idempotency guard (it has a database). */
export const RUNS_IDEMPOTENCY = Symbol('RUNS_IDEMPOTENCY');
