/** The keyboard-shortcut overlay (opened with ? or the ? button). */
const SHORTCUTS: Array<[string, string]> = [
  ['Enter', 'send the message'],
  ['Shift+Enter', 'new line in the message'],
  ['Esc', 'interrupt the running turn (or close this overlay)'],
  ['/', 'focus the message box'],
  ['?', 'show these shortcuts'],
];

const COMMANDS: Array<[string, string]> = [
  ['/model ROUTE', 'switch the session to another model route'],
  ['/compact', 'compact the session context (a daemon without compaction answers with a warning)'],
];

export function Help({ onClose }: { onClose: () => void }) {
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onClick={onClose}>
      <div class="dialog" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <dl>
          {SHORTCUTS.map(([k, v]) => (
            <div key={k}>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
        <h3>Commands in the message box</h3>
        <dl>
          {COMMANDS.map(([k, v]) => (
            <div key={k}>
              <dt>
                <code>{k}</code>
              </dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
        <button class="primary" onClick={onClose} autofocus>
          Close
        </button>
      </div>
    </div>
  );
}
