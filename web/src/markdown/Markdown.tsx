/**
 * Markdown text of an agent reply or reasoning, rendered as it streams: each update lexes
 * only the last block (BlockStream), and a block is re-rendered only when its own text
 * changed — the blocks before it are rendered once.
 */
import { memo } from 'preact/compat';
import { useRef } from 'preact/hooks';
import type { Token } from 'marked';
import { BlockStream } from './blocks';
import { block } from './render';

const Block = memo(
  function Block({ token }: { token: Token; raw: string }) {
    return <>{block(token, 0)}</>;
  },
  (a, b) => a.raw === b.raw,
);

export function Markdown({ text }: { text: string }) {
  const stream = useRef<BlockStream | null>(null);
  stream.current ??= new BlockStream();
  const blocks = stream.current.update(text);
  return (
    <div class="text md">
      {blocks.map((b) => (
        <Block key={b.index} token={b.token} raw={b.token.raw} />
      ))}
    </div>
  );
}
