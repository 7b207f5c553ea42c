/** The sidebar's notification switch: asks the browser's permission on the click, then turns notifications on or off. */
import { useState } from 'preact/hooks';
import type { Notifier } from '../notify';

export function NotifyToggle({ notifier }: { notifier: Notifier }) {
  const [state, setState] = useState(() => notifier.state());
  if (state === 'unsupported') return null;
  if (state === 'denied') {
    return (
      <p class="hint notify" data-notify={state}>
        Notifications are blocked for this page in the browser's site settings.
      </p>
    );
  }
  const on = state === 'on';
  return (
    <button
      class="notify"
      data-notify={state}
      aria-pressed={on}
      title="A system notification when a session needs an approval or finishes a turn while this tab is hidden"
      onClick={() => {
        if (on) {
          notifier.disable();
          setState(notifier.state());
        } else {
          void notifier.enable().then(setState);
        }
      }}
    >
      {on ? 'Notifications on' : state === 'off' ? 'Notifications off' : 'Enable notifications'}
    </button>
  );
}
