/**
 * A fenced or indented code block: its language, a Copy button, and the code —
 * highlighted once its closing fence has arrived (a block still streaming is shown plain,
 * so a long block is not highlighted again on every delta).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { Tokens } from 'marked';
import { isClosedCode } from './blocks';

type Highlighter = typeof import('./highlight');

let highlighter: Highlighter | null = null;
let loading: Promise<Highlighter> | null = null;

/** The highlighter chunk, fetched once (same origin: the page's CSP allows it). */
function loadHighlighter(): Promise<Highlighter> {
  loading ??= import('./highlight').then((m) => (highlighter = m));
  return loading;
}

/** Copy text to the clipboard; the older selection route where the Clipboard API is missing (plain http on another host). */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
}

function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 1500);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button
      type="button"
      class="md-copy"
      aria-label="Copy code"
      data-state={state}
      onClick={() => copyText(text).then(() => setState('copied'), () => setState('failed'))}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
    </button>
  );
}

export function CodeBlock({ token }: { token: Tokens.Code }) {
  const lang = (token.lang ?? '').trim().split(/\s+/)[0]!.toLowerCase().replace(/[^a-z0-9_+#.-]/g, '');
  const closed = isClosedCode(token);
  const [, setLoaded] = useState(highlighter !== null);
  useEffect(() => {
    if (closed && !highlighter) void loadHighlighter().then(() => setLoaded(true), () => undefined);
  }, [closed]);
  const lit = useMemo(() => (closed && highlighter ? highlighter.highlight(token.text, lang) : null), [closed, token.text, lang, highlighter]);
  return (
    <div class="md-code" data-lang={lang || undefined}>
      <div class="md-code-bar">
        <span class="md-lang">{lit?.language ?? lang}</span>
        <CopyButton text={token.text} />
      </div>
      <pre>
        <code class={lit ? `hljs language-${lit.language}` : undefined} data-highlighted={lit ? 'yes' : undefined}>
          {lit ? lit.nodes : token.text}
        </code>
      </pre>
    </div>
  );
}
