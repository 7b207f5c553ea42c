/**
 * The message box ("Message"): Enter sends, Shift+Enter adds a line. While a turn runs a
 * message is sent as queue (its own turn, after this one) or steer (joins this turn).
 * `/compact` and `/model ROUTE` are sent as the ops they name.
 */
import { useState } from 'preact/hooks';
import type { SessionView, Store } from '../store';
import { LIMITS, type Op } from '../wire';

type Mode = 'queue' | 'steer';

/** The op a typed line stands for, or an error to show. */
export function opOf(text: string, running: boolean, mode: Mode): Op | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '/compact') return { type: 'capability_command', capability: 'session', command: 'compact' };
  const model = /^\/model\s+(\S+)$/.exec(trimmed);
  if (model) return { type: 'set_model', route: model[1]! };
  if (new TextEncoder().encode(text).length > LIMITS.messageTextMaxBytes) {
    return { error: `a message may have at most ${LIMITS.messageTextMaxBytes} bytes` };
  }
  return running ? { type: 'message', text, mode } : { type: 'message', text };
}

export function Composer({ store, view }: { store: Store; view: SessionView }) {
  const [text, setText] = useState('');
  const [mode, setMode] = useState<Mode>('queue');
  const [error, setError] = useState<string | null>(null);
  const running = view.folded.activeTurnId !== null;
  const disabled = view.descriptor === null;

  const send = (): void => {
    if (!text.trim() || disabled) return;
    const op = opOf(text, running, mode);
    if ('error' in op) return setError(op.error);
    if (store.submit(op)) {
      setText('');
      setError(null);
    }
  };

  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <label for="message" class="label">
        Message
      </label>
      <textarea
        id="message"
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        value={text}
        disabled={disabled}
        placeholder={running ? 'A turn is running: your message is queued or steers it' : 'Ask the agent… (Enter sends, Shift+Enter adds a line)'}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          }
        }}
      />
      <div class="composer-bar">
        {running && (
          <fieldset class="mode">
            <legend>Send as</legend>
            {(['queue', 'steer'] as const).map((m) => (
              <label key={m} title={m === 'queue' ? 'its own turn, after the running one' : 'joins the running turn before its next model call'}>
                <input type="radio" name="mode" value={m} checked={mode === m} onChange={() => setMode(m)} />
                {m === 'queue' ? 'Queue' : 'Steer'}
              </label>
            ))}
          </fieldset>
        )}
        {error && <span class="error-text">{error}</span>}
        <button class="primary" type="submit" disabled={disabled || !text.trim()}>
          Send
        </button>
      </div>
    </form>
  );
}
