/** Entry point of the browser UI: read the fragment, connect to this origin's /v1, render. */
import { render } from 'preact';
import { takeFragment } from './hash';
import { preloadMarkdown } from './markdown';
import { Store } from './store';
import { App } from './ui/App';
import './styles.css';

const fragment = takeFragment();
const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
const store = new Store(`${scheme}//${location.host}/v1`, fragment.session);
const root = document.getElementById('app')!;
root.textContent = ''; // the "Loading…" placeholder of index.html
render(<App store={store} />, root);
store.start();
void preloadMarkdown().catch(() => undefined); // replies show as plain text if it cannot load

// A pasted `#session=ID` / `#token=T` on an open page: use it without a reload.
window.addEventListener('hashchange', () => {
  const frag = takeFragment();
  if (frag.token) store.useToken(frag.token);
  if (frag.session) store.select(frag.session);
});
