import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { columnsOf, GroupCommit } from './group-commit.js';
import { queryPrepared } from './prepared.js';

export interface RowToInsert {
  target: EntityTarget<ObjectLiteral>;
  entity: ObjectLiteral;
}

interface InsertPlan {
  table: string;
  columns: {
    name: string;
    /** The PostgreSQL type its values are sent as in an array (`unnest`); null when they cannot be. */
    arrayOf: string | null;
    value: (entity: ObjectLiteral) => unknown;
  }[];
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
          arrayOf: arrayElementType(dataSource, column),
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
 * A column's type as an array element: its own type, but text for the character types (an array
 * of `character` would cut every value to one character; PostgreSQL casts text to the column's own
 * length on insert). Array columns cannot be sent inside an array (unnest would flatten them).
 */
function arrayElementType(dataSource: DataSource, column: ColumnMetadata): string | null {
  if (column.isArray) return null;
  const type = dataSource.driver.normalizeType(column);
  return type === 'character' || type === 'character varying' ? 'text' : type;
}

/** Concurrent `insertAtomically` calls of one data source, queued by statement shape. */
const groups = new WeakMap<DataSource, Map<string, GroupCommit<Gathered, void>>>();
/** Calls written together at most. */
const MAX_GROUP = 64;
/** Grouped statements of one shape running at once (of the pool's connections). */
const GROUPS_IN_FLIGHT = 2;

/**
 * Inserts several rows (e.g. a transaction, its 3DS session and its outbox event) in ONE statement:
 * atomic like a transaction, without BEGIN/COMMIT round trips or a connection held idle in
 * transaction between them. Foreign keys between the rows are checked at the end of the statement.
 * The statement is prepared once per connection (named), so PostgreSQL does not parse and plan a
 * multi-row CTE on every request.
 *
 * Calls of the same shape made in the same turn, or while others are being written, go together in
 * the next statement (group commit, `GroupCommit`): one round trip and one commit for many requests
 * under load. Each call still resolves only once its own rows are committed, and a call the database
 * refuses for its rows fails alone (its group is written again call by call).
 */
export async function insertAtomically(dataSource: DataSource, rows: RowToInsert[]): Promise<void> {
  const call = gather(dataSource, rows, '');
  let byShape = groups.get(dataSource);
  if (!byShape) groups.set(dataSource, (byShape = new Map<string, GroupCommit<Gathered, void>>()));
  let group = byShape.get(call.shape);
  if (!group) {
    group = new GroupCommit<Gathered, void>(
      async (calls) => {
        const { sql, params } = statementOf(calls);
        await queryPrepared(dataSource, sql, params);
        return calls.map(() => undefined);
      },
      { maxBatch: groupable(call) ? MAX_GROUP : 1, maxInFlight: GROUPS_IN_FLIGHT },
    );
    byShape.set(call.shape, group);
  }
  await group.submit(call);
}

/** Whether calls of this shape can be sent as arrays (no array column among the values). */
function groupable(call: Gathered): boolean {
  return call.plans.every((plan, row) =>
    plan.columns.every((column, i) => call.defaulted[row][i] || column.arrayOf !== null),
  );
}

/**
 * Inserts one row unless it conflicts with a unique constraint (`ON CONFLICT DO NOTHING`), as one
 * prepared statement; answers whether it was inserted. For hot paths where the new row is the
 * common case and a conflict means "already there" (a card the vault already holds).
 */
export async function insertUnlessConflict(dataSource: DataSource, row: RowToInsert): Promise<boolean> {
  const { sql, params } = statementOf([
    gather(dataSource, [row], ' ON CONFLICT DO NOTHING RETURNING 1 AS inserted'),
  ]);
  return (await queryPrepared(dataSource, sql, params)).length === 1;
}

/** One call's rows: their tables, which columns take their default, and the values of the others. */
interface Gathered {
  /** Tables, defaulted columns and suffix: calls of one shape share a statement. */
  shape: string;
  plans: InsertPlan[];
  defaulted: boolean[][];
  /** Per row, the values of the columns not defaulted. */
  values: unknown[][];
  suffix: string;
}

function gather(dataSource: DataSource, rows: RowToInsert[], suffix: string): Gathered {
  let shape = suffix;
  const plans = rows.map(({ target }) => planOf(dataSource, target));
  const values: unknown[][] = [];
  const defaulted: boolean[][] = rows.map(({ entity }, row) => {
    const plan = plans[row];
    const given: unknown[] = [];
    values.push(given);
    shape += `${plan.table}:`;
    return plan.columns.map((column) => {
      const value = column.value(entity);
      // Columns the entity leaves undefined take their database default.
      if (value === undefined) {
        shape += '0';
        return true;
      }
      given.push(value);
      shape += '1';
      return false;
    });
  });
  return { shape, plans, defaulted, values, suffix };
}

/**
 * The statement inserting the rows of calls of one shape, and its parameters. Alone, a call's rows
 * go as VALUES; calls written together go as one array per column (`unnest`), so every group of a
 * shape shares one prepared statement whatever its size.
 */
function statementOf(calls: Gathered[]) {
  const [first] = calls;
  const grouped = calls.length > 1;
  const params: unknown[] = [];
  for (let row = 0; row < first.plans.length; row++) {
    if (!grouped) params.push(...first.values[row]);
    else params.push(...columnsOf(calls.map((call) => call.values[row])));
  }
  // The text is built once per shape, so a request only gathers values.
  const key = `${grouped ? 'grouped' : 'alone'}|${first.shape}`;
  let sql = statements.get(key);
  if (!sql) {
    sql = buildStatement(first.plans, first.defaulted, grouped) + first.suffix;
    statements.set(key, sql);
  }
  return { sql, params };
}

const statements = new Map<string, string>();

function buildStatement(plans: InsertPlan[], defaulted: boolean[][], grouped: boolean): string {
  let index = 0;
  const inserts = plans.map((plan, row) => {
    const given = plan.columns.filter((_, i) => !defaulted[row][i]);
    const names = given.map((c) => `"${c.name}"`).join(', ');
    if (!grouped)
      return `INSERT INTO "${plan.table}" (${names}) VALUES (${given.map(() => `$${++index}`).join(', ')})`;
    const arrays = given.map((c) => `$${++index}::${c.arrayOf}[]`);
    return `INSERT INTO "${plan.table}" (${names}) SELECT * FROM unnest(${arrays.join(', ')})`;
  });
  const [last, ...first] = inserts.reverse();
  return first.length
    ? `WITH ${first.map((statement, i) => `w${i} AS (${statement})`).join(', ')} ${last}`
    : last;
}
