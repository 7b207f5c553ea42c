/**
 * Renaming a session in place (its title in the header) and deleting it after a
 * confirmation (docs/web.md, "Titles and deletion").
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { RequestError } from '../link';
import type { AppState, SessionView, Store } from '../store';
import { LIMITS } from '../wire';

/** The header's title: a click (or Enter on it) edits it; Enter or leaving the field saves, Esc cancels. */
export function TitleEditor({ store, view, connected }: { store: Store; view: SessionView; connected: boolean }) {
  const current = view.descriptor?.title ?? '';
  const [draft, setDraft] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (draft !== null) input.current?.select();
  }, [draft !== null]);
  if (draft === null) {
    return (
      <h1>
        <button
          class="title-button"
          title="Rename this session"
          aria-label={`Rename session ${current || view.id}`}
          disabled={!view.descriptor || !connected}
          onClick={() => setDraft(current)}
        >
          {current || view.id}
        </button>
      </h1>
    );
  }
  const save = (): void => {
    if (draft === null) return;
    const title = draft.trim();
    setDraft(null);
    if (title !== current.trim()) store.rename(view.id, title);
  };
  return (
    <input
      ref={input}
      class="title-input"
      aria-label="Session title"
      value={draft}
      maxLength={LIMITS.titleMaxChars}
      placeholder="Untitled session"
      onInput={(e) => setDraft(e.currentTarget.value)}
      onBlur={() => input.current?.isConnected && save()}
      onKeyDown={(e) => {
        e.stopPropagation(); // Esc here cancels the edit, not the running turn
        if (e.key === 'Enter') {
          e.preventDefault();
          save();
        } else if (e.key === 'Escape') {
          e.preventDefault();
          setDraft(null);
        }
      }}
    />
  );
}

/** "Delete session?" — names what goes, and stops a running turn first only when asked to. */
export function DeleteDialog({ store, state, view, onClose }: { store: Store; state: AppState; view: SessionView; onClose: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const d = view.descriptor;
  const name = d?.title || view.id;
  const running = view.folded.activeTurnId !== null || (error !== null && error.startsWith('busy'));
  const children = (state.sessions ?? []).filter((s) => s.parent_session_id === view.id).length;
  useEffect(() => cancel.current?.focus(), []);
  const remove = (force: boolean): void => {
    setBusy(true);
    setError(null);
    store.deleteSession(view.id, force).then(onClose, (err: unknown) => {
      setBusy(false);
      setError(err instanceof RequestError ? `${err.code}: ${err.message}` : String(err));
    });
  };
  return (
    <div
      class="overlay"
      onClick={(e) => e.target === e.currentTarget && !busy && onClose()}
      onKeyDown={(e) => {
        e.stopPropagation(); // the page's shortcuts (Esc interrupts, y approves) wait until the dialog is closed
        if (e.key === 'Escape' && !busy) onClose();
      }}
    >
      <div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="delete-title" aria-describedby="delete-what">
        <h2 id="delete-title">Delete this session?</h2>
        <p id="delete-what">
          <strong>{name}</strong> — its conversation{children > 0 ? `, its ${children} subagent session${children > 1 ? 's' : ''}` : ''} and everything the daemon
          recorded of them are removed for good. This cannot be undone.
        </p>
        {running && <p class="warn-text">A turn is running in this session: deleting it stops the turn first.</p>}
        {error && (
          <p class="error-text" role="alert">
            Not deleted — {error}
          </p>
        )}
        <div class="buttons end">
          <button ref={cancel} type="button" disabled={busy} onClick={onClose}>
            Cancel
          </button>
          <button type="button" class="danger-fill" disabled={busy || state.link.state !== 'open'} onClick={() => remove(running)}>
            {busy ? 'Deleting…' : running ? 'Stop and delete' : 'Delete'}
          </button>
        </div>
      </div>
    </div>
  );
}
