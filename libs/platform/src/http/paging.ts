import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  PaginationHeaders,
  pageResponseHeaders,
  type FieldError,
  type PageRequest,
} from '@byrd/contracts';
import { ApiError } from '../errors/api-error.js';

export type RequestHeaders = Record<string, string | string[] | undefined>;

/**
 * Reads `x-page` (1-based) and `x-page-size` (default 20) of a header-paged list (the webhook
 * service's); the one parser of these headers. A value that is not a positive integer
 * is refused with 400 BYRD900 naming the header; a size above 100 is served as 100 (the answer's
 * `x-page-size` says so).
 */
export function readPage(headers: RequestHeaders): PageRequest {
  const errors: FieldError[] = [];
  const read = (name: string, fallback: number): number => {
    const raw = headers[name];
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (value === undefined || value === '') return fallback;
    if (!/^\d{1,9}$/.test(value) || Number(value) < 1) {
      errors.push({ field: name, message: `${name} must be a whole number of 1 or more, got "${value}"` });
      return fallback;
    }
    return Number(value);
  };
  const page = read(PaginationHeaders.Page, 1);
  const pageSize = Math.min(read(PaginationHeaders.PageSize, DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  if (errors.length) throw ApiError.invalid(errors.map((e) => e.message).join('; '), errors);
  return { page, pageSize };
}

/** A page of a header-paged list: its items and the x-current-page / x-page-count / ... headers. */
export interface Page<T> {
  data: T[];
  headers: Record<string, string>;
}

/** The page of `data` answering `request`, out of `totalItems` in all. */
export function pageOf<T>(request: PageRequest, data: T[], totalItems: number): Page<T> {
  return { data, headers: pageResponseHeaders(request, totalItems) };
}
