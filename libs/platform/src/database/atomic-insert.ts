import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import { queryPrepared } from './prepared.js';

export interface RowToInsert {
  target: EntityTarget<ObjectLiteral>;
  entity: ObjectLiteral;
}

interface InsertPlan {
  table: string;
  columns: { name: string; value: (entity: ObjectLiteral) => unknown }[];
}

const plans = new WeakMap<DataSource, Map<EntityTarget<ObjectLiteral>, InsertPlan>>();
/** Column list of an entity, from its TypeORM metadata (generated columns left to the database). */
function planOf(dataSource: DataSource, target: EntityTarget<ObjectLiteral>): InsertPlan {
  let cache = plans.get(dataSource);
  if (!cache) plans.set(dataSource, (cache = new Map<EntityTarget<ObjectLiteral>, InsertPlan>()));
  let plan = cache.get(target);
  if (!plan) {
    const metadata = dataSource.getMetadata(target);
    plan = {
      table: metadata.tablePath,
      columns: metadata.columns
        .filter((column) => !column.isGenerated)
        .map((column) => ({
          name: column.databaseName,
          value: (entity: ObjectLiteral) => {
            const raw = column.getEntityValue(entity) as unknown;
            const transformer = column.transformer;
            const value = transformer && !Array.isArray(transformer) ? (transformer.to(raw) as unknown) : raw;
            return column.type === 'jsonb' && value !== null && value !== undefined
              ? JSON.stringify(value)
              : value;
          },
        })),
    };
    cache.set(target, plan);
  }
  return plan;
}

/**
 * Inserts several rows (e.g. a transaction, its 3DS session and its outbox event) in ONE statement:
 * atomic like a transaction, without BEGIN/COMMIT round trips or a connection held idle in
 * transaction between them. Foreign keys between the rows are checked at the end of the statement.
 * The statement is prepared once per connection (named), so PostgreSQL does not parse and plan a
 * multi-row CTE on every request.
 */
export async function insertAtomically(dataSource: DataSource, rows: RowToInsert[]): Promise<void> {
  const { sql, params } = statementFor(dataSource, rows, '');
  await queryPrepared(dataSource, sql, params);
}

/**
 * Inserts one row unless it conflicts with a unique constraint (`ON CONFLICT DO NOTHING`), as one
 * prepared statement; answers whether it was inserted. For hot paths where the new row is the
 * common case and a conflict means "already there" (a card the vault already holds).
 */
export async function insertUnlessConflict(dataSource: DataSource, row: RowToInsert): Promise<boolean> {
  const { sql, params } = statementFor(dataSource, [row], ' ON CONFLICT DO NOTHING RETURNING 1 AS inserted');
  return (await queryPrepared(dataSource, sql, params)).length === 1;
}

/** The statement inserting `rows` (followed by `suffix`) and its parameters. */
function statementFor(dataSource: DataSource, rows: RowToInsert[], suffix: string) {
  const params: unknown[] = [];
  // The shape (tables, and which columns take their default) names the statement; its text is
  // built once per shape, so a request only gathers values.
  let shape = suffix;
  const defaulted: boolean[][] = rows.map(({ target, entity }) => {
    const plan = planOf(dataSource, target);
    shape += `${plan.table}:`;
    return plan.columns.map((column) => {
      const value = column.value(entity);
      // Columns the entity leaves undefined take their database default.
      if (value === undefined) {
        shape += '0';
        return true;
      }
      params.push(value);
      shape += '1';
      return false;
    });
  });
  let sql = statements.get(shape);
  if (!sql) {
    sql =
      buildStatement(
        rows.map(({ target }) => planOf(dataSource, target)),
        defaulted,
      ) + suffix;
    statements.set(shape, sql);
  }
  return { sql, params };
}

const statements = new Map<string, string>();

function buildStatement(plans: InsertPlan[], defaulted: boolean[][]): string {
  let index = 0;
  const inserts = plans.map((plan, row) => {
    const placeholders = plan.columns.map((_, i) => (defaulted[row][i] ? 'DEFAULT' : `$${++index}`));
    return `INSERT INTO "${plan.table}" (${plan.columns.map((c) => `"${c.name}"`).join(', ')}) VALUES (${placeholders.join(', ')})`;
  });
  const [last, ...first] = inserts.reverse();
  return first.length
    ? `WITH ${first.map((statement, i) => `w${i} AS (${statement})`).join(', ')} ${last}`
    : last;
}
