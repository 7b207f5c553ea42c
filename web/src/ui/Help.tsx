/** The keyboard-shortcut overlay (opened with ? or the ? button). */
const SHORTCUTS: Array<[string, string]> = [
  ['Enter', 'send the message'],
  ['Shift+Enter', 'new line in the message'],
  ['Esc', 'interrupt the running turn (or close this overlay)'],
  ['y / a / n', 'approve / approve for session / deny the pending call (outside the message box)'],
  ['/', 'focus the message box'],
  ['?', 'show these shortcuts'],
];

const COMMANDS: Array<[string, string]> = [
  ['/model ROUTE', 'switch the session to another model route'],
  ['/compact', 'summarize the conversation so far to free context (also the Compact button)'],
];

function Keys({ rows, as: Tag }: { rows: Array<[string, string]>; as: 'kbd' | 'code' }) {
  return (
    <dl>
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>
            <Tag>{k}</Tag>
          </dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Help({ onClose }: { onClose: () => void }) {
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onClick={onClose}>
      <div class="dialog" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <Keys rows={SHORTCUTS} as="kbd" />
        <h3>Commands in the message box</h3>
        <Keys rows={COMMANDS} as="code" />
        <button class="primary" onClick={onClose} autofocus>
          Close
        </button>
      </div>
    </div>
  );
}
