// Admin input (fault rules, seed files, delays, the request-log filter) is written by hand, so a
// misspelled key is likely; read leniently it would pass as "not given" and the rule or option
// would silently do something else (`count: 2` for `times: 2` fires on every call). Every reader
// of such input refuses keys it does not know, naming them and the keys it does.

/** The message for `obj`'s keys outside `known`, or undefined when there are none. */
export function unknownKeysProblem(obj: object, known: readonly string[], where: string): string | undefined {
  const unknown = Object.keys(obj).filter((k) => !known.includes(k));
  if (unknown.length === 0) return undefined;
  return `${where}: unknown ${unknown.length === 1 ? 'key' : 'keys'} ${unknown.join(', ')} (known: ${known.join(', ')})`;
}
