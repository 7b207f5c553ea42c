/**
 * The web UI's incremental Markdown lexing (web/src/markdown/blocks.ts) and its safety
 * helpers: a reply streamed in any chunking ends with the same blocks as lexing it whole;
 * finished blocks keep their token objects (rendered once) and each delta lexes only
 * the last block; only http(s)/mailto links survive; character references decode to text.
 */
import fc from 'fast-check';
import { Lexer } from 'marked';
import { describe, expect, it } from 'vitest';
import { BlockStream, isClosedCode } from '../web/src/markdown/blocks.js';
import { decodeEntities, safeHref } from '../web/src/markdown/safe.js';

const DOC = [
  '# Plan',
  '',
  'First a paragraph with **bold**, `code` and a [link][ref].',
  '',
  '1. one',
  '2. two',
  '   - nested',
  '',
  '| a | b |',
  '|---|--:|',
  '| 1 | 2 |',
  '',
  '```python',
  'def f(x):',
  '    return x * 2',
  '```',
  '',
  '- [ ] task',
  '- [x] done',
  '',
  '> quoted',
  '> text',
  '',
  '---',
  '',
  '[ref]: https://example.com/ref',
  '',
  'Last words.',
].join('\n');

/** Blocks reduced to what the view renders from: type and raw text. */
const shape = (tokens: ReadonlyArray<{ type: string; raw: string }>) => tokens.map((t) => `${t.type}:${t.raw}`);

function stream(text: string, cuts: number[]): BlockStream {
  const s = new BlockStream();
  for (const cut of [...cuts].sort((a, b) => a - b)) s.update(text.slice(0, cut));
  return s;
}

describe('BlockStream', () => {
  it('ends with the blocks of the whole text, whatever the chunking', () => {
    // Tokens compared whole: inline tokens too (the `[link][ref]` defined further down is a link).
    const whole = JSON.parse(JSON.stringify([...Lexer.lex(DOC, { gfm: true })]));
    expect(JSON.stringify(whole)).toContain('"href":"https://example.com/ref"');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: DOC.length }), { maxLength: 60 }), (cuts) => {
        const s = stream(DOC, cuts);
        expect(JSON.parse(JSON.stringify(s.update(DOC).map((b) => b.token)))).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps finished blocks (same token objects, same index) and lexes only the last one per delta', () => {
    const s = new BlockStream();
    let prev = s.update('');
    let maxLexed = 0;
    let lexedAll = 0;
    for (let n = 1; n <= DOC.length; n += 3) {
      const text = DOC.slice(0, n);
      const blocks = s.update(text);
      // Every block but the previous last (the live one) is the very same object at the same
      // index — except while a link definition arrives and everything is lexed again.
      if (s.lastLexed !== text.length) for (const b of prev.slice(0, -2)) expect(blocks[b.index]).toBe(b);
      if (s.lastLexed === text.length && text.length > 80) {
        // Only while the definition of `[ref]` (used further up) arrives.
        const end = text.trimEnd();
        expect(end.slice(end.lastIndexOf('\n') + 1)).toMatch(/^\[ref\]: /);
        lexedAll++;
      } else maxLexed = Math.max(maxLexed, s.lastLexed);
      prev = blocks;
    }
    // The largest block is the code fence (about 60 characters); the whole reply is lexed
    // again only while the link definition arrives.
    expect(lexedAll).toBeGreaterThan(0);
    expect(lexedAll).toBeLessThanOrEqual(Math.ceil('[ref]: https://example.com/ref'.length / 3));
    expect(maxLexed).toBeLessThan(80);
    expect(DOC.length).toBeGreaterThan(250);
  });

  it('starts over when the text is replaced rather than extended', () => {
    const s = new BlockStream();
    s.update('# one\n\npara\n\nmore');
    expect(shape(s.update('# two\n\nother').map((b) => b.token))).toEqual(shape(Lexer.lex('# two\n\nother', { gfm: true })));
  });

  it('knows when a fenced block is closed', () => {
    const code = (src: string) => Lexer.lex(src, { gfm: true })[0] as Parameters<typeof isClosedCode>[0];
    expect(isClosedCode(code('```ts\nlet x = 1;\n```'))).toBe(true);
    expect(isClosedCode(code('```ts\nlet x = 1;\n'))).toBe(false);
    expect(isClosedCode(code('```ts\nlet x = 1;\n``'))).toBe(false);
    expect(isClosedCode(code('~~~\nx\n~~~\n'))).toBe(true);
    expect(isClosedCode(code('    indented'))).toBe(true);
  });
});

describe('Markdown safety helpers', () => {
  it('links only http, https and mailto addresses', () => {
    expect(safeHref('https://example.com/a?b#c')).toBe('https://example.com/a?b#c');
    expect(safeHref('http://localhost:7777/')).toBe('http://localhost:7777/');
    expect(safeHref('mailto:a@b.c')).toBe('mailto:a@b.c');
    for (const bad of ['javascript:alert(1)', ' JavaScript:alert(1)', 'java\tscript:alert(1)', 'data:text/html,x', 'vbscript:x', 'file:///etc/passwd', '/relative', '#top', 'x.png', '']) {
      expect(safeHref(bad), bad).toBeNull();
    }
  });

  it('decodes character references to plain text', () => {
    expect(decodeEntities('a &amp; b &lt;script&gt; &#65;&#x42; &copy; &unknown; &#0;')).toBe('a & b <script> AB © &unknown; \ufffd');
  });
});
