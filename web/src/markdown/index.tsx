/**
 * The Markdown view as the transcript uses it. The parser and renderer are their own
 * chunk, fetched at start-up (preloadMarkdown) beside the first connection, so the page's
 * first script stays small; until it has arrived a reply is shown as plain text.
 */
import { useEffect, useState } from 'preact/hooks';
import './markdown.css';

type View = typeof import('./Markdown');

let view: View | null = null;
let loading: Promise<View> | null = null;

export function preloadMarkdown(): Promise<View> {
  loading ??= import('./Markdown').then((m) => (view = m));
  return loading;
}

export function Markdown({ text }: { text: string }) {
  const [, setLoaded] = useState(view !== null);
  useEffect(() => {
    if (!view) void preloadMarkdown().then(() => setLoaded(true), () => undefined);
  }, []);
  return view ? <view.Markdown text={text} /> : <div class="text">{text}</div>;
}
