import type { ListEnvelope, PaginationHeaders } from '@byrd/contracts';

/** Largest page the services serve; iterators ask for it, to make the fewest requests. */
export const MAX_PAGE_SIZE = 100;

/** A page of the webhook service (its paging travels in headers). */
export interface HeaderPage<T> {
  /** The items of this page. */
  data: T[];
  /** 1-based page returned (`x-current-page`). */
  page: number;
  /** Page size served (`x-page-size`; sizes above 100 are served as 100). */
  pageSize: number;
  /** Number of pages (`x-page-count`). */
  pageCount: number;
  /** Items over all pages (`x-total-item-count`). */
  totalItemCount: number;
}

/** Paging of a webhook-service list: `x-page` (1-based) and `x-page-size` request headers. */
export interface HeaderPageQuery {
  page?: number;
  pageSize?: number;
}

const PAGE: (typeof PaginationHeaders)['Page'] = 'x-page';
const PAGE_SIZE: (typeof PaginationHeaders)['PageSize'] = 'x-page-size';
const CURRENT_PAGE: (typeof PaginationHeaders)['CurrentPage'] = 'x-current-page';
const PAGE_COUNT: (typeof PaginationHeaders)['PageCount'] = 'x-page-count';
const TOTAL_ITEM_COUNT: (typeof PaginationHeaders)['TotalItemCount'] = 'x-total-item-count';

export function pageRequestHeaders(query: HeaderPageQuery): Record<string, string> {
  const headers: Record<string, string> = {};
  if (query.page !== undefined) headers[PAGE] = String(query.page);
  if (query.pageSize !== undefined) headers[PAGE_SIZE] = String(query.pageSize);
  return headers;
}

export function headerPage<T>(data: T[], headers: Headers): HeaderPage<T> {
  const read = (name: string) => Number(headers.get(name) ?? 0);
  return {
    data,
    page: read(CURRENT_PAGE),
    pageSize: read(PAGE_SIZE),
    pageCount: read(PAGE_COUNT),
    totalItemCount: read(TOTAL_ITEM_COUNT),
  };
}

interface Fetched<T> {
  items: T[];
  hasMore: boolean;
  /** Items over all pages, as this page counted them. */
  total: number;
}

/**
 * Every item of an offset-paged list, newest first, fetching a page only when the previous one is
 * used up. Lists are newest first, so an item created meanwhile pushes older ones onto the next
 * page: an id already yielded is skipped rather than repeated. Items removed meanwhile (tokens
 * deleted, by this loop or anyone) pull later ones onto pages already read: when the total shrinks,
 * the pages that many items cover are read again, and only the items not yet yielded come out.
 */
export async function* everyItem<T>(
  fetchPage: (page: number) => Promise<Fetched<T>>,
  idOf: (item: T) => string,
  pageSize: number,
  firstPage = 1,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  let total: number | null = null;
  for (let page = firstPage; ; page++) {
    const fetched = await fetchPage(page);
    if (total !== null && fetched.total < total && page > firstPage) {
      const back = Math.ceil((total - fetched.total) / pageSize);
      total = fetched.total;
      page = Math.max(firstPage, page - back) - 1; // read again from there
      continue;
    }
    total = fetched.total;
    for (const item of fetched.items) {
      const id = idOf(item);
      if (seen.has(id)) continue;
      seen.add(id);
      yield item;
    }
    // Past the last page, not at an empty one: a page can come back short (rows removed meanwhile).
    if (!fetched.hasMore) return;
  }
}

/** Whether a gateway list (`?pageNumber=&pageSize=`, `pagination` in the body) has pages after this one. */
export function envelopeHasMore<T>(envelope: ListEnvelope<T>): boolean {
  const { pageNumber, pageSize, totalAvailable } = envelope.pagination;
  return pageNumber * pageSize < totalAvailable;
}

/** Whether a webhook-service page has pages after it. */
export function headerPageHasMore<T>(page: HeaderPage<T>): boolean {
  return page.page < page.pageCount;
}
