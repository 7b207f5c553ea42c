/**
 * Markdown text of an agent reply or reasoning, rendered as it streams: each update lexes
 * only the last block (BlockStream), and only that block is rendered again — the blocks
 * before it keep their tokens and are rendered once.
 */
import { memo } from 'preact/compat';
import { useRef } from 'preact/hooks';
import type { Token } from 'marked';
import { BlockStream } from './blocks';
import { block } from './render';

/** A finished block keeps its token object, so it renders once; the live last block gets a new one per update. */
const Block = memo(function Block({ token }: { token: Token }) {
  return <>{block(token, 0)}</>;
});

export function Markdown({ text }: { text: string }) {
  const stream = useRef<BlockStream | null>(null);
  stream.current ??= new BlockStream();
  const blocks = stream.current.update(text);
  return (
    <div class="text md">
      {blocks.map((b) => (
        <Block key={b.index} token={b.token} />
      ))}
    </div>
  );
}
