function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toDate(record: Record<string, unknown>, key: string): void {
  const value = record[key];
  if (typeof value !== 'string') return;
  const date = new Date(value);
  if (!Number.isNaN(date.getTime())) record[key] = date;
}

/**
 * Turns the metadata timestamps of an object just parsed from JSON into Date objects, in place,
 * so objects match client-node's V1ObjectMeta type. Only metadata is touched: timestamps in
 * spec and status (conditions' lastTransitionTime) stay the strings the API defines.
 */
export function reviveMetadata(obj: unknown): void {
  if (!isRecord(obj) || !isRecord(obj['metadata'])) return;
  const metadata = obj['metadata'];
  toDate(metadata, 'creationTimestamp');
  toDate(metadata, 'deletionTimestamp');
  if (Array.isArray(metadata['managedFields'])) {
    for (const entry of metadata['managedFields'] as unknown[]) if (isRecord(entry)) toDate(entry, 'time');
  }
}
