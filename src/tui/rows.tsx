/** Renders pre-laid-out rows (see layout.ts); each row is exactly one terminal line. */
import { Box, Text } from 'ink';
import { memo } from 'react';
import type { Line, Seg } from './text.js';

function SegText({ s }: { s: Seg }) {
  const props: Record<string, unknown> = {};
  if (s.color) props.color = s.color;
  if (s.bg) props.backgroundColor = s.bg;
  if (s.bold) props.bold = true;
  if (s.dim) props.dimColor = true;
  if (s.italic) props.italic = true;
  if (s.inverse) props.inverse = true;
  if (s.underline) props.underline = true;
  return <Text {...props}>{s.text}</Text>;
}

export const Row = memo(function Row({ line }: { line: Line }) {
  if (line.length === 0) return <Text> </Text>;
  return (
    <Text wrap="truncate-end">
      {line.map((s, i) => (
        <SegText key={i} s={s} />
      ))}
    </Text>
  );
});

export function Rows({ lines }: { lines: readonly Line[] }) {
  return (
    <Box flexDirection="column">
      {lines.map((l, i) => (
        <Row key={i} line={l} />
      ))}
    </Box>
  );
}
