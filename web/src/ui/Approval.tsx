/**
 * The approval card of the pending `exec_approval_request`. It disappears when the
 * session's `approval_resolved` arrives — from this tab or any other — never on click.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Store } from '../store';
import type { ApprovalDecision, ExecApprovalRequestMsg } from '../wire';
import { argsLine } from './format';

const BUTTONS: Array<{ decision: ApprovalDecision; label: string; cls: string }> = [
  { decision: 'approve', label: 'Approve', cls: 'primary' },
  { decision: 'approve_for_session', label: 'Approve for session', cls: '' },
  { decision: 'deny', label: 'Deny', cls: '' },
  { decision: 'abort', label: 'Abort', cls: 'danger' },
];

export function ApprovalCard({ store, request }: { store: Store; request: ExecApprovalRequestMsg }) {
  const [sent, setSent] = useState<string | null>(null);
  const answered = sent === request.approval_id;
  // If no approval_resolved follows (the submission was refused), offer the buttons again.
  useEffect(() => {
    if (!answered) return;
    const t = setTimeout(() => setSent(null), 5000);
    return () => clearTimeout(t);
  }, [answered]);
  return (
    <section class="approval" role="alertdialog" aria-label="Approval needed" data-approval={request.approval_id}>
      <div class="approval-head">
        <strong>Approval needed</strong> — the agent wants to run <code>{request.tool}</code> in <code>{request.cwd}</code>
      </div>
      <pre class="approval-args">{argsLine(request.arguments)}</pre>
      <div class="buttons">
        {BUTTONS.map((b) => (
          <button
            key={b.decision}
            class={b.cls}
            disabled={answered}
            onClick={() => {
              if (store.submit({ type: 'exec_approval', id: request.approval_id, decision: b.decision })) setSent(request.approval_id);
            }}
          >
            {b.label}
          </button>
        ))}
        {answered && <span class="hint">sent…</span>}
      </div>
    </section>
  );
}
