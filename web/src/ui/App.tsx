/** The page: sidebar, the open session (header, transcript, approval card, message box), overlays. */
import { useEffect, useState } from 'preact/hooks';
import { childApprovalOf, liveStatus, type Store } from '../store';
import type { ApprovalDecision } from '../wire';
import { Composer } from './Composer';
import { Header } from './Header';
import { Help } from './Help';
import { ApprovalCard } from './Approval';
import { Sidebar } from './Sidebar';
import { Transcript } from './Transcript';
import { Banner, TokenForm, Toasts } from './Status';

/** Answering the approval card from the keyboard (outside the message box), as in the TUI. */
const APPROVAL_KEYS: Record<string, ApprovalDecision> = { y: 'approve', a: 'approve_for_session', n: 'deny' };

/** Re-render on every store change. */
function useStore(store: Store) {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((n) => n + 1)), [store]);
  return store.state;
}

export function App({ store }: { store: Store }) {
  const state = useStore(store);
  const [help, setHelp] = useState(false);
  const [drawer, setDrawer] = useState(false);
  const [creating, setCreating] = useState(false);
  const view = state.view;
  const childApproval = childApprovalOf(state);

  // The tab's title says when a session needs the user.
  const status = view?.descriptor ? liveStatus(view) : null;
  const name = view ? view.descriptor?.title || view.id : null;
  useEffect(() => {
    const prefix = status === 'awaiting_approval' ? '(approval) ' : status === 'running' ? '(running) ' : '';
    document.title = name ? `${prefix}${name} — agentd` : 'agentd';
  }, [status, name]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      const typing = e.target instanceof HTMLElement && /^(TEXTAREA|INPUT|SELECT)$/.test(e.target.tagName);
      if (e.key === 'Escape') {
        if (help) return setHelp(false);
        if (drawer) return setDrawer(false);
        const turn = store.state.view?.folded.activeTurnId;
        if (turn) {
          e.preventDefault();
          store.submit({ type: 'interrupt', turn_id: turn });
        }
        return;
      }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      const pending = store.state.view?.folded.pendingApproval;
      const decision = pending ? APPROVAL_KEYS[e.key] : undefined;
      if (pending && decision) {
        e.preventDefault();
        store.submit({ type: 'exec_approval', id: pending.approval_id, decision });
        return;
      }
      if (e.key === '?') {
        e.preventDefault();
        setHelp(true);
      } else if (e.key === '/') {
        e.preventDefault();
        document.querySelector<HTMLTextAreaElement>('#message')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store, help, drawer]);

  return (
    <div class={`layout${drawer ? ' drawer-open' : ''}`}>
      <Sidebar store={store} state={state} creating={creating} setCreating={setCreating} onPicked={() => setDrawer(false)} />
      <div class="scrim" onClick={() => setDrawer(false)} />
      <main class="main">
        <Header store={store} state={state} onMenu={() => setDrawer(!drawer)} onHelp={() => setHelp(true)} />
        <Banner link={state.link} />
        {state.link.state === 'unauthorized' ? (
          <TokenForm message={state.link.message} onToken={(t) => store.useToken(t)} />
        ) : view ? (
          <>
            <Transcript key={view.id} store={store} view={view} />
            {view.folded.pendingApproval && <ApprovalCard store={store} request={view.folded.pendingApproval} />}
            {childApproval && (
              <ApprovalCard key={childApproval.request.approval_id} store={store} request={childApproval.request} child={childApproval.child_session_id} />
            )}
            <Composer key={view.id} store={store} view={view} />
          </>
        ) : (
          <div class="empty">
            <h2>No session open</h2>
            <p>{state.sessions?.length ? 'Pick a session on the left, or start a new one.' : 'Start a new session to talk to an agent.'}</p>
            <button
              class="primary"
              onClick={() => {
                setCreating(true);
                setDrawer(true);
              }}
            >
              New session
            </button>
          </div>
        )}
      </main>
      {help && <Help onClose={() => setHelp(false)} />}
      <Toasts toasts={state.toasts} />
    </div>
  );
}
