/**
 * The approval card of the pending `exec_approval_request`. It disappears when the
 * session's `approval_resolved` arrives — from this tab or any other — never on click.
 * With `child`, the request is a subagent's (`pending_child_approval`): the answer goes to
 * that child session, and the card goes when the parent's descriptor no longer shows it.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Store } from '../store';
import { approveForSessionLabel, type ApprovalDecision, type ExecApprovalRequestMsg } from '../wire';
import { argsLine } from './format';

const BUTTONS: Array<{ decision: ApprovalDecision; label: string; cls: string }> = [
  { decision: 'approve', label: 'Approve', cls: 'primary' },
  { decision: 'approve_for_session', label: 'Approve for session', cls: '' },
  { decision: 'deny', label: 'Deny', cls: '' },
  { decision: 'abort', label: 'Abort', cls: 'danger' },
];

export function ApprovalCard({ store, request, child }: { store: Store; request: ExecApprovalRequestMsg; child?: string }) {
  const [sent, setSent] = useState<string | null>(null);
  const answered = sent === request.approval_id;
  // If no approval_resolved follows (the submission was refused), offer the buttons again.
  useEffect(() => {
    if (!answered) return;
    const t = setTimeout(() => setSent(null), 5000);
    return () => clearTimeout(t);
  }, [answered]);
  return (
    <section class="approval" role="alertdialog" aria-label="Approval needed" data-approval={request.approval_id} data-child={child}>
      <div class="approval-head">
        <strong>Approval needed</strong> — {child ? <>a subagent (session <a href={`#session=${encodeURIComponent(child)}`}>{child}</a>)</> : 'the agent'} wants
        to run <code>{request.tool}</code> in <code>{request.cwd}</code>
      </div>
      <pre class="approval-args">{argsLine(request.arguments)}</pre>
      <div class="buttons">
        {BUTTONS.map((b) => (
          <button
            key={b.decision}
            class={b.cls}
            disabled={answered}
            onClick={() => {
              const op = { type: 'exec_approval' as const, id: request.approval_id, decision: b.decision };
              if (child ? store.submitTo(child, op) : store.submit(op)) setSent(request.approval_id);
            }}
          >
            {b.decision === 'approve_for_session' ? approveForSessionLabel(request.tool) : b.label}
          </button>
        ))}
        {answered && <span class="hint">sent…</span>}
      </div>
    </section>
  );
}
