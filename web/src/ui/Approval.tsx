/**
 * The approval card of the pending `exec_approval_request`. It disappears when the
 * session's `approval_resolved` arrives — from this tab or any other — never on click.
 * With `child`, the request is a subagent's (`pending_child_approval`): the answer goes to
 * that child session, and the card goes when the parent's descriptor no longer shows it.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Store } from '../store';
import { approveForSessionLabel, type ApprovalDecision, type ExecApprovalRequestMsg } from '../wire';
import { callArguments, visibleText } from '../../../src/render/call-view.js';

const BUTTONS: Array<{ decision: ApprovalDecision; label: string; cls: string }> = [
  { decision: 'approve', label: 'Approve', cls: 'primary' },
  { decision: 'approve_for_session', label: 'Approve for session', cls: '' },
  { decision: 'deny', label: 'Deny', cls: '' },
  { decision: 'abort', label: 'Abort', cls: 'danger' },
];

/** A value longer than this (characters or lines) starts collapsed, one click away. */
const COLLAPSE_CHARS = 600;
const COLLAPSE_LINES = 8;

/**
 * Every argument of the call, each under its name, control characters shown as escapes
 * (`\r`, `\x1b`, …); no field is hidden because another looks like a command. A long
 * value (a `write_file`'s content) starts collapsed behind its size.
 */
function CallArguments({ args }: { args: unknown }) {
  const list = callArguments(args);
  if (list.length === 0) return <pre class="approval-args">(no arguments)</pre>;
  return (
    <dl class="approval-args-list">
      {list.map((a) => {
        const text = visibleText(a.value);
        const lines = text.split('\n').length;
        const long = text.length > COLLAPSE_CHARS || lines > COLLAPSE_LINES;
        return (
          <div key={a.name} class="approval-arg" data-arg={a.name}>
            <dt>{visibleText(a.name)}</dt>
            <dd>
              {long ? (
                <details>
                  <summary>
                    {lines} lines, {a.value.length} characters — show
                  </summary>
                  <pre class="approval-args">{text}</pre>
                </details>
              ) : (
                <pre class="approval-args">{text}</pre>
              )}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

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
      <CallArguments args={request.arguments} />
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
