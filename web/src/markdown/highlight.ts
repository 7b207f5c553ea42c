/**
 * Syntax highlighting of code blocks (lowlight: highlight.js grammars → a syntax tree),
 * loaded on the first code block as its own chunk so the page's first load stays small.
 * The tree becomes Preact elements with `hljs-*` classes (styles.css colours them); no
 * HTML string is produced.
 */
import type { ComponentChildren } from 'preact';
import { h } from 'preact';
import type { ElementContent, Root } from 'hast';
import { common, createLowlight } from 'lowlight';

const lowlight = createLowlight(common);

/** Larger blocks are shown plain: highlighting them would hold the page up. */
const MAX_CHARS = 100_000;
/** Guessing the language of an unlabelled block is tried only on shorter ones. */
const MAX_AUTO_CHARS = 10_000;

function toChildren(nodes: readonly ElementContent[]): ComponentChildren[] {
  return nodes.map((n, i) => {
    if (n.type === 'text') return n.value;
    if (n.type !== 'element') return null;
    const cls = n.properties.className;
    const className = Array.isArray(cls) ? cls.join(' ') : typeof cls === 'string' ? cls : undefined;
    return h('span', { key: i, class: className }, toChildren(n.children));
  });
}

/** The language lowlight knows `lang` as (name or alias), or null. */
export function knownLanguage(lang: string): string | null {
  return lang && lowlight.registered(lang) ? lang : null;
}

/** Highlighted `code`, or null (unknown language, too large, nothing recognized). */
export function highlight(code: string, lang: string): { nodes: ComponentChildren[]; language: string } | null {
  if (code.length > MAX_CHARS) return null;
  let tree: Root;
  const known = knownLanguage(lang);
  if (known) tree = lowlight.highlight(known, code);
  else if (!lang && code.length <= MAX_AUTO_CHARS) tree = lowlight.highlightAuto(code);
  else return null;
  const language = (tree.data as { language?: string } | undefined)?.language ?? known ?? '';
  if (!language) return null;
  return { nodes: toChildren(tree.children as ElementContent[]), language };
}
