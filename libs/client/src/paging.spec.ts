import { describe, expect, it } from '@jest/globals';
import { everyItem } from './paging.js';

/** A newest-first list paged by offset, as the services page them, that the test changes meanwhile. */
function offsetList(ids: string[], pageSize: number) {
  const items = [...ids];
  return {
    items,
    fetchPage: async (page: number) => {
      const slice = items.slice((page - 1) * pageSize, page * pageSize);
      return { items: slice, hasMore: page * pageSize < items.length, total: items.length };
    },
  };
}

const ids = (count: number, prefix = 'i') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('everyItem', () => {
  it('yields every item still there when the loop deletes each one it is given', async () => {
    const list = offsetList(ids(25), 10);
    const yielded: string[] = [];
    for await (const id of everyItem(list.fetchPage, (item) => item, 10)) {
      yielded.push(id);
      list.items.splice(list.items.indexOf(id), 1); // as `tokens.delete(id)` in the loop
    }
    expect(yielded.sort()).toEqual(ids(25).sort());
    expect(list.items).toEqual([]);
  });

  it('yields an item once when new ones push it onto the next page', async () => {
    const list = offsetList(ids(15), 10);
    const yielded: string[] = [];
    for await (const id of everyItem(list.fetchPage, (item) => item, 10)) {
      yielded.push(id);
      if (id === 'i0') list.items.unshift('new0', 'new1'); // created meanwhile, newest first
    }
    expect(yielded).toEqual(ids(15));
  });

  it('steps back only as many pages as items went, not to the first page, on a long list', async () => {
    const list = offsetList(ids(1_000), 10);
    const fetched: number[] = [];
    const fetchPage = (page: number) => {
      fetched.push(page);
      return list.fetchPage(page);
    };
    const yielded: string[] = [];
    for await (const id of everyItem(fetchPage, (item) => item, 10)) {
      yielded.push(id);
      if (id === 'i505') list.items.splice(list.items.indexOf('i3'), 1); // one read item deleted elsewhere
    }
    // i510 moved onto page 51, already read: it comes out all the same.
    expect(new Set(yielded).size).toBe(1_000);
    expect(fetched.length).toBeLessThan(110); // 100 pages and a step back, not a second pass
  });
});
