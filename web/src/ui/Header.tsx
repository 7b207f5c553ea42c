/** The open session's header: title (renamed in place), live status, model picker, token and context gauge, Interrupt, Delete. */
import { useState } from 'preact/hooks';
import { liveStatus, type AppState, type SessionView, type Store } from '../store';
import { statusLabel, tokens } from './format';
import { DeleteDialog, TitleEditor } from './SessionActions';

function ModelPicker({ store, state, view }: { store: Store; state: AppState; view: SessionView }) {
  const current = view.descriptor?.model;
  const routes = state.models?.routes ?? [];
  if (!current) return null;
  const route = routes.find((r) => r.route === current.route);
  const efforts = route?.reasoning_efforts ?? [];
  return (
    <div class="model">
      <select
        aria-label="Model"
        value={current.route}
        disabled={state.link.state !== 'open' || routes.length === 0}
        onChange={(e) => store.submit({ type: 'set_model', route: e.currentTarget.value })}
      >
        {routes.length === 0 && <option value={current.route}>{current.route}</option>}
        {routes.map((r) => (
          <option key={r.route} value={r.route}>
            {r.route}
            {r.model !== r.route ? ` — ${r.model}` : ''}
          </option>
        ))}
      </select>
      {efforts.length > 0 && (
        <select
          aria-label="Reasoning effort"
          value={current.reasoning_effort ?? ''}
          onChange={(e) => store.submit({ type: 'set_model', route: current.route, reasoning_effort: e.currentTarget.value })}
        >
          <option value="" disabled>
            effort
          </option>
          {efforts.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      )}
    </div>
  );
}

/** Session tokens so far and, when the route has a context window, how full the next call's context is. */
function Gauge({ view }: { view: SessionView }) {
  const d = view.descriptor;
  const total = view.folded.total;
  // Older daemons send no `context`: fall back to the last call's tokens.
  const context = d?.context as { estimated_tokens?: number; context_window?: number | null } | undefined;
  const window = context?.context_window ?? d?.model.context_window ?? null;
  const used = context?.estimated_tokens ?? view.folded.lastInput;
  const pct = window && used !== null ? Math.min(100, Math.round((used / window) * 100)) : null;
  return (
    <div class="gauge" aria-label="Token usage">
      <span class="tokens" title="session total: input / output tokens">
        {total ? `${tokens(total.input_tokens)} in · ${tokens(total.output_tokens)} out` : 'no tokens yet'}
      </span>
      {pct !== null && window && (
        <span class="context" title={`context: about ${used} of ${window} tokens`}>
          <meter min={0} max={100} value={pct} low={60} high={85} optimum={0} />
          {pct}% of {tokens(window)}
        </span>
      )}
    </div>
  );
}

export function Header({ store, state, onMenu, onHelp }: { store: Store; state: AppState; onMenu: () => void; onHelp: () => void }) {
  const view = state.view;
  const status = view?.descriptor ? liveStatus(view) : null;
  const turn = view?.folded.activeTurnId ?? null;
  const [deleting, setDeleting] = useState<string | null>(null);
  const connected = state.link.state === 'open';
  return (
    <header class="header">
      <button class="icon mobile-only" aria-label="Show sessions" onClick={onMenu}>
        ☰
      </button>
      <div class="heading">
        {view ? <TitleEditor key={view.id} store={store} view={view} connected={connected} /> : <h1>agentd</h1>}
        {view?.descriptor && <span class="cwd">{view.descriptor.cwd}</span>}
      </div>
      {status && (
        <span class={`pill ${status}`} data-testid="session-status" data-status={status}>
          {statusLabel(status)}
        </span>
      )}
      {view && <ModelPicker store={store} state={state} view={view} />}
      {view?.descriptor && <Gauge view={view} />}
      {view?.descriptor && (
        <button
          disabled={state.link.state !== 'open'}
          onClick={() => store.submit({ type: 'capability_command', capability: 'session', command: 'compact' })}
          title="Summarize the conversation so far to free context (/compact)"
        >
          Compact
        </button>
      )}
      {turn && (
        <button
          class="danger"
          disabled={state.link.state !== 'open'}
          onClick={() => store.submit({ type: 'interrupt', turn_id: turn })}
          title="Interrupt the running turn (Esc)"
        >
          Interrupt
        </button>
      )}
      {view?.descriptor && (
        <button class="subtle" title="Delete this session and its subagent sessions" disabled={!connected} onClick={() => setDeleting(view.id)}>
          Delete
        </button>
      )}
      {view && deleting === view.id && <DeleteDialog store={store} state={state} view={view} onClose={() => setDeleting(null)} />}
      <button class="icon" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={onHelp}>
        ?
      </button>
    </header>
  );
}
