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
    for await (const id of everyItem(list.fetchPage, (item) => item)) {
      yielded.push(id);
      list.items.splice(list.items.indexOf(id), 1); // as `tokens.delete(id)` in the loop
    }
    expect(yielded.sort()).toEqual(ids(25).sort());
    expect(list.items).toEqual([]);
  });

  it('yields an item once when new ones push it onto the next page', async () => {
    const list = offsetList(ids(15), 10);
    const yielded: string[] = [];
    for await (const id of everyItem(list.fetchPage, (item) => item)) {
      yielded.push(id);
      if (id === 'i0') list.items.unshift('new0', 'new1'); // created meanwhile, newest first
    }
    expect(yielded).toEqual(ids(15));
  });
});
