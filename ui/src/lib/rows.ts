// The Live view's rows in memory, newest first. Pure functions, tested in
// e2e/rows.test.mjs.

/** At most this many rows are kept from the stream: the list stays smooth at 100 000 rows,
 * and a window left open under a flood of deliveries does not grow without end. */
export const MAX_STREAMED_ROWS = 100_000;

/** `fresh` (newest first) put on top of `rows` (newest first). Beyond `max` rows the oldest
 * are let go: the database keeps them, and `before` (the oldest id kept) is where paging
 * continues to load them again; `null` when none was let go. */
export function withNewest<T extends { id: number }>(
  rows: T[],
  fresh: T[],
  max: number,
): { rows: T[]; before: number | null } {
  const all = fresh.concat(rows);
  if (all.length <= max) return { rows: all, before: null };
  const kept = all.slice(0, max);
  return { rows: kept, before: kept[kept.length - 1].id };
}
