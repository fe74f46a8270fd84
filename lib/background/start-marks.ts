/**
 * The worker's start in its performance timeline, for the cold-start bench (`test/bench/cold.ts`):
 * `countersign:bg.<name>` marks at the steps of a start (listeners registered, vault database open,
 * vault session restored, services built, first page request served, approval window opened, first answer sent). Each
 * name is marked once per worker; the marks hold no data and cost microseconds, so every build keeps them.
 */

const marked = new Set<string>();

/** Marks `name` (`countersign:bg.<name>`) the first time it is reached in this worker; never throws. */
export function startMark(name: string): void {
  if (marked.has(name)) return;
  marked.add(name);
  try {
    performance.mark(`countersign:bg.${name}`);
  } catch {
    /* no performance timeline (some test doubles): nothing to mark */
  }
}
