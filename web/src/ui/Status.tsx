/** Connection states the user must see: connecting / reconnecting banner, the token form, toasts. */
import { useState } from 'preact/hooks';
import type { LinkStatus } from '../link';
import type { Toast } from '../store';

export function Banner({ link }: { link: LinkStatus }) {
  if (link.state === 'open' || link.state === 'unauthorized') return null;
  const text =
    link.state === 'connecting'
      ? link.attempt === 0
        ? 'Connecting to the daemon…'
        : `Reconnecting… (attempt ${link.attempt})`
      : `Connection lost — reconnecting in ${Math.ceil(link.inMs / 100) / 10} s (attempt ${link.attempt})`;
  return (
    <div class={`banner ${link.state}`} role="status" data-link={link.state}>
      {text}
    </div>
  );
}

export function TokenForm({ message, onToken }: { message: string; onToken: (token: string) => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      class="token-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (token.trim()) onToken(token.trim());
      }}
    >
      <h2>This daemon needs a token</h2>
      <p>
        {message.charAt(0).toUpperCase() + message.slice(1).replace(/\.$/, '')}. Open the page with <code>agentd open</code> (it puts the token in the address), or paste the token from
        the daemon's data dir (<code>DATA_DIR/token</code>).
      </p>
      <label>
        Token
        <input type="password" autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </label>
      <button class="primary" type="submit">
        Connect
      </button>
    </form>
  );
}

export function Toasts({ toasts }: { toasts: Toast[] }) {
  return (
    <div class="toasts" role="alert" aria-live="assertive">
      {toasts.map((t) => (
        <div class="toast" key={t.id}>
          {t.text}
        </div>
      ))}
    </div>
  );
}
