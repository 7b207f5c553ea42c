/**
 * src/tui/text.ts against string-width: wide (CJK, Hangul), emoji (modifiers, ZWJ
 * sequences, flags, VS16, keycaps) and combining text are measured as the library
 * measures them, and wrapping and truncating never overshoot a row or split a cluster.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { graphemes, lineWidth, seg, truncateLine, wrap, type Line } from '../src/tui/text.js';

const SAMPLES = {
  cjk: '日本語のテキスト',
  hangul: '한국어 텍스트',
  fullwidth: 'ＡＢＣ１２３',
  skinTone: '👍🏽',
  zwjFamily: '👨‍👩‍👧',
  flag: '🇯🇵',
  vs16: '☀️',
  watch: '⌚',
  check: '✅',
  keycap: '1️⃣',
  combining: 'e\u0301a\u0308o\u0302',
  zeroWidth: 'a\u200bb',
  mixed: 'ok 日本 👍🏽 e\u0301 ✅ done',
};

const text = (l: Line) => l.map((s) => s.text).join('');

describe('measuring', () => {
  it.each(Object.entries(SAMPLES))('%s is as wide as string-width says', (_name, s) => {
    expect(lineWidth([seg(s)])).toBe(stringWidth(s));
  });

  it('counts the emoji and symbols a hand-written East Asian table missed as double width', () => {
    for (const s of [SAMPLES.watch, SAMPLES.check, SAMPLES.flag, SAMPLES.keycap, SAMPLES.zwjFamily]) {
      expect(lineWidth([seg(s)]), s).toBe(2);
    }
    expect(lineWidth([seg(SAMPLES.combining)])).toBe(3);
  });

  it('keeps grapheme clusters whole', () => {
    expect(graphemes(SAMPLES.zwjFamily)).toEqual([SAMPLES.zwjFamily]);
    expect(graphemes(SAMPLES.combining)).toHaveLength(3);
    expect(graphemes(`${SAMPLES.flag}${SAMPLES.skinTone}`)).toEqual([SAMPLES.flag, SAMPLES.skinTone]);
  });
});

describe('wrapping and truncating', () => {
  const clusters = new Set(Object.values(SAMPLES).flatMap((s) => graphemes(s)));

  it.each([5, 6, 7, 10, 13])('wraps every sample to rows of at most %i columns, clusters intact', (width) => {
    for (const s of Object.values(SAMPLES)) {
      const rows = wrap([seg(`${s} ${s}${s}`)], width);
      for (const r of rows) {
        expect(stringWidth(text(r)), `${s} @${width}: ${JSON.stringify(text(r))}`).toBeLessThanOrEqual(width);
        for (const g of graphemes(text(r))) expect(clusters.has(g) || g === ' ', g).toBe(true);
      }
      expect(rows.map(text).join('').replace(/ /g, '')).toBe(`${s}${s}${s}`.replace(/ /g, ''));
    }
  });

  it.each([1, 2, 3, 4, 5, 8])('truncates every sample to at most %i columns, with the ellipsis', (width) => {
    for (const s of Object.values(SAMPLES)) {
      const line = truncateLine([seg(s, { bold: true }), seg(s)], width);
      expect(stringWidth(text(line)), `${s} @${width}`).toBeLessThanOrEqual(width);
      if (stringWidth(s) * 2 > width) expect(text(line).endsWith('…')).toBe(true);
    }
  });

  it('leaves out a double-width character that would straddle the cut', () => {
    expect(text(truncateLine([seg('日本語')], 4))).toBe('日…');
    expect(text(truncateLine([seg('a👍🏽bc')], 3))).toBe('a…');
  });
});
