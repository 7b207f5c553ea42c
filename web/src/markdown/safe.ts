/**
 * What model text may turn into on the page: links only to `http:`, `https:` and `mailto:`
 * addresses, and character references decoded to plain text (never parsed as HTML).
 */

const ALLOWED = new Set(['http:', 'https:', 'mailto:']);

/** The address to link to, or null when the link must stay text (javascript:, data:, relative…). */
export function safeHref(href: string): string | null {
  let url: URL;
  try {
    url = new URL(href.trim());
  } catch {
    return null; // relative or malformed: this page has nothing to link to
  }
  return ALLOWED.has(url.protocol) ? url.href : null;
}

/** The named references models use; any other `&name;` stays as written. */
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™',
  hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«',
  raquo: '»', times: '×', divide: '÷', middot: '·', bull: '•', deg: '°', plusmn: '±', larr: '←',
  rarr: '→', uarr: '↑', darr: '↓', harr: '↔', rArr: '⇒', le: '≤', ge: '≥', ne: '≠', check: '✓',
  euro: '€', pound: '£', yen: '¥', sect: '§', para: '¶', shy: '\u00ad', zwj: '\u200d',
};

/** Decode `&amp;`, `&#65;`, `&#x41;` in inline text (what Markdown text means), as plain text. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/g, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return NAMED[ref] ?? whole;
  });
}
