import { IsOptional, Max, Min, IsInt } from 'class-validator';
import { describe, type ReturnCode } from '../codes.js';
import { EmptyIsAbsent, ToInteger } from '../decorators.js';
import type { ActionType } from '../enums.js';

/** One invalid field of a rejected request. */
export interface FieldError {
  /** Property path as sent, e.g. `card.number` or `paymentOptions.allowedPaymentMethods.0`. */
  field: string;
  /** What is wrong with it. */
  message: string;
}

/** Body of every error response (HTTP 4xx/5xx). */
export interface ErrorBody {
  /** Return code, e.g. BYRD900. */
  code: ReturnCode;
  /** Fixed text of the code. */
  description: string;
  /** Human sentence about this failure. */
  message: string;
  /** Invalid fields, for BYRD900. */
  errors?: FieldError[];
  /** Id of the request, to quote to support. */
  requestId: string;
}

/** Builds an {@link ErrorBody}, taking `description` from the code table. */
export function errorBody(
  code: ReturnCode,
  message: string,
  requestId: string,
  errors?: FieldError[],
): ErrorBody {
  return { code, description: describe(code), message, ...(errors?.length ? { errors } : {}), requestId };
}

/** Follow-up action for the shopper (3DS redirect). */
export interface Action {
  /** Always `redirect`. */
  type: ActionType;
  /** Address to send the shopper to. */
  url: string;
}

/** `{ data }` wrapper of the webhook service responses. */
export interface DataEnvelope<T> {
  /** The payload. */
  data: T;
}

/** Request/response header names shared by the services. */
export const HttpHeaders = {
  /** Merchant API key (a GUID). */
  ApiKey: 'x-api-key',
  /** Idempotency key of a POST (≤ 255 chars). */
  IdempotencyKey: 'idempotency-key',
  /** Seconds to wait after a 429. */
  RetryAfter: 'retry-after',
  /** Request id, echoed as `requestId` in bodies. */
  RequestId: 'x-request-id',
} as const;

/** Longest accepted idempotency key. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Paging header names of the webhook service. */
export const PaginationHeaders = {
  /** Request: 1-based page number. */
  Page: 'x-page',
  /** Request and response: page size. */
  PageSize: 'x-page-size',
  /** Response: page returned. */
  CurrentPage: 'x-current-page',
  /** Response: number of pages. */
  PageCount: 'x-page-count',
  /** Response: number of items over all pages. */
  TotalItemCount: 'x-total-item-count',
} as const;

/** Page size when none is asked for. */
export const DEFAULT_PAGE_SIZE = 20;
/** Largest page size served. */
export const MAX_PAGE_SIZE = 100;

/** A page request: 1-based page and its size. */
export interface PageRequest {
  page: number;
  pageSize: number;
}

/** Response paging headers for a page of `totalItems` results. */
export function pageResponseHeaders(request: PageRequest, totalItems: number): Record<string, string> {
  return {
    [PaginationHeaders.CurrentPage]: String(request.page),
    [PaginationHeaders.PageSize]: String(request.pageSize),
    [PaginationHeaders.PageCount]: String(Math.ceil(totalItems / request.pageSize)),
    [PaginationHeaders.TotalItemCount]: String(totalItems),
  };
}

/** Paging block of the gateway's list envelope. */
export interface ListPagination {
  /** 1-based page returned. */
  pageNumber: number;
  /** Page size used. */
  pageSize: number;
  /** Items in this page. */
  total: number;
  /** Items matching the query over all pages. */
  totalAvailable: number;
}

/** List envelope of the gateway (`GET /api/v2/tokens`, `GET /api/v2/transactions`). */
export interface ListEnvelope<T> {
  /** The items. */
  data: T[];
  /** True on success. */
  success: boolean;
  /** Null on success. */
  errorCode: string | null;
  /** Paging block. */
  pagination: ListPagination;
}

/** Query paging of the gateway lists (`?pageNumber=&pageSize=`); numeric strings accepted. */
export class PageQuery {
  /** 1-based page, default 1 (also when empty); at most 2^53 - 1 (a larger number is not exact, and its offset not an SQL integer). */
  @EmptyIsAbsent()
  @IsOptional()
  @ToInteger()
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  pageNumber?: number;

  /** Page size, default 20 (also when empty), at most 100. */
  @EmptyIsAbsent()
  @IsOptional()
  @ToInteger()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  pageSize?: number;
}
