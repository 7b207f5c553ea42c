/**
 * Incremental block lexing of a streaming Markdown reply (docs/web.md, "Markdown"): the
 * blocks before the last one are final once a later block has started, so each update
 * lexes only the text from the start of the last block on. Finished blocks keep their
 * token objects (and their index), so the view renders each of them once.
 */
import { Lexer, type Token, type Tokens, type TokensList } from 'marked';

/** One top-level block: its token, and its position (a stable key for the view). */
export interface Block {
  index: number;
  token: Token;
}

/** CommonMark + GitHub tables, task lists, strikethrough and autolinks. */
const OPTIONS = { gfm: true, breaks: false, pedantic: false } as const;

function lex(src: string, links: Readonly<TokensList['links']>): TokensList {
  const lexer = new Lexer(OPTIONS);
  Object.assign(lexer.tokens.links, links);
  return lexer.lex(src);
}

export class BlockStream {
  /** Finished blocks and the text they cover. */
  private stable: Block[] = [];
  private stableText = '';
  /** Link reference definitions among the finished blocks (the first of a label wins). */
  private stableLinks: TokensList['links'] = {};
  /** Definitions in the unfinished text at the last update, as JSON. */
  private tailLinks = '{}';
  private last: { text: string; blocks: Block[] } | null = null;
  /** Characters lexed by the last update (what one delta cost), for the tests. */
  lastLexed = 0;

  /** The blocks of `text`, reusing every finished block of the previous text it extends. */
  update(text: string): Block[] {
    if (this.last?.text === text) return this.last.blocks;
    const blocks = this.lexFrom(text);
    this.last = { text, blocks };
    return blocks;
  }

  private lexFrom(text: string): Block[] {
    if (!text.startsWith(this.stableText)) this.reset();
    const tail = text.slice(this.stableText.length);
    this.lastLexed = tail.length;
    let tokens = lex(tail, this.stableLinks);
    const tailLinks = JSON.stringify(tokens.links, (k, v: unknown) => (k === '' ? omit(v as TokensList['links'], this.stableLinks) : v));
    if (this.stable.length > 0 && tailLinks !== this.tailLinks && this.mayUse(tokens.links)) {
      // A new (or still arriving) link definition may give meaning to `[text][ref]` in a finished block: lex it all again.
      this.reset();
      this.lastLexed = text.length;
      tokens = lex(text, {});
    }
    this.tailLinks = tailLinks;
    if (tokens.reduce((n, t) => n + t.raw.length, 0) !== text.length - this.stableText.length) {
      // The tokens do not cover the text exactly: never build on them.
      this.reset();
      this.lastLexed = text.length;
      return lex(text, {}).map((token, index) => ({ index, token }));
    }
    // Every block before the last non-blank one is final.
    let last = tokens.length - 1;
    while (last > 0 && tokens[last]!.type === 'space') last--;
    for (let i = 0; i < last; i++) {
      const token = tokens[i]!;
      this.stable.push({ index: this.stable.length, token });
      this.stableText += token.raw;
      if (token.type === 'def') this.stableLinks[token.tag] ??= { href: token.href, title: token.title };
    }
    const live = tokens.slice(Math.max(last, 0)).map((token, i) => ({ index: this.stable.length + i, token }));
    return [...this.stable, ...live];
  }

  /** Whether a finished block mentions `[label` of a definition not among the finished ones. */
  private mayUse(links: TokensList['links']): boolean {
    const text = this.stableText.toLowerCase().replace(/\s+/g, ' ');
    return Object.keys(links).some((tag) => !(tag in this.stableLinks) && text.includes(`[${tag}`));
  }

  private reset(): void {
    this.stable = [];
    this.stableText = '';
    this.stableLinks = {};
    this.tailLinks = '{}';
  }
}

function omit(links: TokensList['links'], known: TokensList['links']): TokensList['links'] {
  return Object.fromEntries(Object.entries(links).filter(([k]) => !(k in known)));
}

/** A fenced code block whose closing fence has arrived (an indented block is always whole). */
export function isClosedCode(token: Tokens.Code): boolean {
  const raw = token.raw.trimEnd();
  const fence = /^ {0,3}(`{3,}|~{3,})/.exec(token.raw);
  if (!fence) return true;
  const lines = raw.split('\n');
  if (lines.length < 2) return false;
  const closing = lines[lines.length - 1]!.trim();
  return closing.startsWith(fence[1]!) && /^(`+|~+)$/.test(closing);
}
