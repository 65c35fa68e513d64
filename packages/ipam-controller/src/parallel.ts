/**
 * Runs `work` over the items with at most `concurrency` in flight; resolves when all settled and
 * throws the first error (wrapped in an AggregateError when several failed) after every item ran,
 * so one failing write does not leave the others half done.
 */
export async function forEachBounded<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  const errors: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (err: unknown) {
        errors.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} of ${items.length} writes failed`);
}
