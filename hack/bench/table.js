// Plain-text tables and number formatting for the bench output.

/** Prints rows (arrays of cells) under headers, columns padded, numbers right-aligned. */
export function printTable(headers, rows) {
  const cells = [headers, ...rows].map((row) => row.map((c) => (c === undefined || c === null ? '' : String(c))));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.every((row) => /^[-+]?[\d.,]+(\s?[a-zµ/%×x]+)?$|^$|^n\/a$/i.test(String(row[i] ?? ''))));
  const line = (row) =>
    row
      .map((c, i) => (numeric[i] && i > 0 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  console.log(line(cells[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of cells.slice(1)) console.log(line(row));
}

export const num = (value, digits = 0) =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
export const ms = (value) => (Number.isFinite(value) ? `${num(value)} ms` : 'n/a');
export const sec = (value) => (Number.isFinite(value) ? `${num(value, 2)} s` : 'n/a');
export const mib = (kib) => (Number.isFinite(kib) ? `${num(kib / 1024, 1)} MiB` : 'n/a');
export const rate = (count, seconds) => (Number.isFinite(seconds) && seconds > 0 ? count / seconds : NaN);

export function section(title) {
  console.log(`\n== ${title}`);
}
