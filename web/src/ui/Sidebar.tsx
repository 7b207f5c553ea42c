/** The session sidebar: live status and last turn's outcome of every session, "New session", notifications. */
import { useState } from 'preact/hooks';
import { liveStatus, type AppState, type Store } from '../store';
import type { SessionDescriptor } from '../wire';
import { relTime, statusLabel } from './format';
import { NotifyToggle } from './NotifyToggle';

const CWD_KEY = 'agentd.cwd';

/** The working directory the form offers: the last one used from this browser, else the newest session's. */
function lastCwd(sessions: SessionDescriptor[] | null): string {
  try {
    const saved = localStorage.getItem(CWD_KEY);
    if (saved) return saved;
  } catch {
    // storage disabled
  }
  return sessions?.find((s) => !s.parent_session_id)?.cwd ?? '';
}

function rememberCwd(cwd: string): void {
  try {
    localStorage.setItem(CWD_KEY, cwd);
  } catch {
    // storage disabled: the form offers the newest session's
  }
}

function NewSession({ store, state, onDone }: { store: Store; state: AppState; onDone: () => void }) {
  const [cwd, setCwd] = useState(() => lastCwd(state.sessions));
  const [route, setRoute] = useState('');
  const [policy, setPolicy] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = (e: Event): void => {
    e.preventDefault();
    setBusy(true);
    const config: Record<string, string> = {};
    if (cwd.trim()) config.cwd = cwd.trim();
    if (route) config.model_route = route;
    if (policy) config.approval_policy = policy;
    store
      .create(config)
      .then((session) => {
        rememberCwd(session.cwd);
        onDone();
      }, () => undefined)
      .finally(() => setBusy(false));
  };
  return (
    <form class="new-session" onSubmit={submit} aria-label="New session">
      <label for="new-cwd">
        <span>Working directory</span>
        <input
          id="new-cwd"
          value={cwd}
          onInput={(e) => setCwd(e.currentTarget.value)}
          placeholder="the daemon's workspace, else your home"
          title="Where the agent's shell and file tools work. Blank: the daemon's configured workspace, else your home directory."
          spellcheck={false}
          autocomplete="off"
        />
      </label>
      <div class="row">
        <label for="new-route">
          <span>Model</span>
          <select id="new-route" value={route} onChange={(e) => setRoute(e.currentTarget.value)}>
            <option value="">default{state.models ? ` (${state.models.default})` : ''}</option>
            {state.models?.routes.map((r) => (
              <option key={r.route} value={r.route}>
                {r.route}
              </option>
            ))}
          </select>
        </label>
        <label for="new-policy">
          <span>Approvals</span>
          <select id="new-policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value)}>
            <option value="">default</option>
            <option value="ask">ask</option>
            <option value="auto">auto</option>
          </select>
        </label>
      </div>
      <button class="primary" type="submit" disabled={busy || state.link.state !== 'open'}>
        {busy ? 'Creating…' : 'Create session'}
      </button>
    </form>
  );
}

function Entry({ s, state, store, onPicked }: { s: SessionDescriptor; state: AppState; store: Store; onPicked: () => void }) {
  const view = state.view;
  const open = view?.id === s.session_id;
  const status = open && view.descriptor ? liveStatus(view) : s.status;
  const outcome = state.outcomes[s.session_id];
  return (
    <li>
      <button
        class={`session${open ? ' current' : ''}`}
        aria-current={open ? 'true' : undefined}
        data-session={s.session_id}
        onClick={() => {
          store.select(s.session_id);
          onPicked();
        }}
      >
        <span class="title">{s.title || s.session_id}</span>
        <span class="meta">
          <span class={`pill ${status}`} data-status={status}>
            {statusLabel(status)}
          </span>
          {outcome && status === 'idle' && (
            <span class={`outcome ${outcome}`} data-outcome={outcome}>
              last turn {outcome === 'complete' ? 'completed' : outcome}
            </span>
          )}
          <span class="when">{relTime(s.updated_at)}</span>
        </span>
        <span class="sub">
          {s.model.route} · {s.cwd}
        </span>
      </button>
    </li>
  );
}

interface SidebarProps {
  store: Store;
  state: AppState;
  creating: boolean;
  setCreating: (open: boolean) => void;
  onPicked: () => void;
}

export function Sidebar({ store, state, creating, setCreating, onPicked }: SidebarProps) {
  const sessions = state.sessions;
  return (
    <nav class="sidebar" aria-label="Sessions">
      <div class="brand">
        <span class="logo" aria-hidden="true">
          a
        </span>
        agentd
      </div>
      <button class="new" aria-expanded={creating} onClick={() => setCreating(!creating)}>
        {creating ? 'Cancel' : '+ New session'}
      </button>
      {creating && (
        <NewSession
          store={store}
          state={state}
          onDone={() => {
            setCreating(false);
            onPicked();
          }}
        />
      )}
      {sessions === null ? (
        <p class="hint">{state.link.state === 'unauthorized' ? 'Not connected.' : 'Loading sessions…'}</p>
      ) : sessions.length === 0 ? (
        <p class="hint">No sessions yet.</p>
      ) : (
        <ul class="sessions">
          {sessions.map((s) => (
            <Entry key={s.session_id} s={s} state={state} store={store} onPicked={onPicked} />
          ))}
        </ul>
      )}
      <NotifyToggle notifier={store.notifier} />
    </nav>
  );
}
