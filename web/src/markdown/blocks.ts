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

function lex(src: string, links: TokensList['links']): TokensList {
  const lexer = new Lexer(OPTIONS);
  Object.assign(lexer.tokens.links, links);
  return lexer.lex(src);
}

export class BlockStream {
  /** Finished blocks and the length of the text they cover. */
  private stable: Block[] = [];
  private stableText = '';
  private links: TokensList['links'] = {};
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
    const tokens = lex(tail, this.links);
    Object.assign(this.links, tokens.links);
    if (tokens.reduce((n, t) => n + t.raw.length, 0) !== tail.length) {
      // The tokens do not cover the text exactly: never build on them.
      this.reset();
      this.lastLexed = text.length;
      return lex(text, {}).map((token, index) => ({ index, token }));
    }
    // Every block before the last non-blank one is final.
    let last = tokens.length - 1;
    while (last > 0 && tokens[last]!.type === 'space') last--;
    for (let i = 0; i < last; i++) {
      this.stable.push({ index: this.stable.length, token: tokens[i]! });
      this.stableText += tokens[i]!.raw;
    }
    const live = tokens.slice(Math.max(last, 0)).map((token, i) => ({ index: this.stable.length + i, token }));
    return [...this.stable, ...live];
  }

  private reset(): void {
    this.stable = [];
    this.stableText = '';
    this.links = {};
  }
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
