import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';

/**
 * One page of a list that can be long (a merchant's webhooks, its vault) and the number of rows over
 * all pages. `query` selects one entity (no joins) with its filters and order set; the entity's key
 * is `id`. TypeORM's own `getManyAndCount` counts `DISTINCT id` (every matching id sorted or hashed)
 * and reads each skipped row whole; here the count is a plain `count(*)`, the page's ids are found
 * first (from an index alone when one holds the filter, the order and the id), and only the page's
 * rows are read: a deep page of a million rows costs an index walk, not a million row reads.
 */
export async function pageOfRows<T extends ObjectLiteral>(
  query: SelectQueryBuilder<T>,
  skip: number,
  take: number,
): Promise<[T[], number]> {
  const id = `${query.alias}.id`;
  const [counted, idRows] = await Promise.all([
    query.clone().orderBy().select('count(*)::int', 'total').getRawOne<{ total: number }>(),
    query.clone().select(id, 'id').offset(skip).limit(take).getRawMany<{ id: string }>(),
  ]);
  const total = counted?.total ?? 0;
  if (idRows.length === 0) return [[], total];
  const rows = await query
    .clone()
    .andWhere(`${id} IN (:...pageIds)`, { pageIds: idRows.map((row) => row.id) })
    .getMany();
  return [rows, total];
}
