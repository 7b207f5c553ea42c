/**
 * Browser notifications (docs/web.md, "Notifications"): while this tab is hidden, an
 * approval request or a finished turn of any session shows a system notification. The
 * permission is asked only when the user clicks "Enable notifications" (browsers ignore a
 * request that no gesture started); the user can turn them off again here, per browser.
 * Each event is notified once (by its approval id or turn), never on a replay.
 */
import type { Event, SessionDescriptor } from './wire';
import { argsLine } from './ui/format';

export type NotifyState = 'unsupported' | 'default' | 'denied' | 'on' | 'off';

const OFF_KEY = 'agentd.notify';
/** Remembered keys, so a notification is shown at most once even across tabs' polls. */
const SEEN_MAX = 500;

/** What to say, and which session a click opens. */
export interface Notice {
  key: string;
  sessionId: string;
  title: string;
  body: string;
}

const firstLine = (s: string, max = 140): string => {
  const line = s.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The notice for one live event of a session, or null when it is not worth one. */
export function noticeOf(sessionId: string, name: string, e: Event): Notice | null {
  const m = e.msg as { type: string; [k: string]: unknown };
  switch (m.type) {
    case 'exec_approval_request':
      return { key: `approval:${String(m.approval_id)}`, sessionId, title: `Approval needed — ${name}`, body: `${String(m.tool)}: ${firstLine(argsLine(m.arguments))}` };
    case 'turn_complete':
      return { key: `turn:${sessionId}:${e.turn_id ?? ''}`, sessionId, title: `Turn complete — ${name}`, body: firstLine(String(m.last_message ?? '')) || 'The agent has finished.' };
    case 'turn_failed': {
      const err = (m.error ?? {}) as { code?: string; message?: string };
      return { key: `turn:${sessionId}:${e.turn_id ?? ''}`, sessionId, title: `Turn failed — ${name}`, body: firstLine([err.code, err.message].filter(Boolean).join(': ')) };
    }
    default:
      return null;
  }
}

/** The notice for a session not open here whose polled status changed, or null. */
export function noticeOfChange(prev: SessionDescriptor | undefined, next: SessionDescriptor): Notice | null {
  if (!prev) return null;
  const name = next.title || next.session_id;
  const approval = next.pending_approval;
  if (approval && prev.pending_approval?.approval_id !== approval.approval_id) {
    return { key: `approval:${approval.approval_id}`, sessionId: next.session_id, title: `Approval needed — ${name}`, body: `${approval.tool}: ${firstLine(argsLine(approval.arguments))}` };
  }
  if (prev.status !== 'idle' && next.status === 'idle' && prev.active_turn_id) {
    return { key: `turn:${next.session_id}:${prev.active_turn_id}`, sessionId: next.session_id, title: `Turn finished — ${name}`, body: 'The agent has finished.' };
  }
  return null;
}

export class Notifier {
  private readonly seen = new Set<string>();

  constructor(private readonly open: (sessionId: string) => void) {}

  state(): NotifyState {
    if (typeof Notification === 'undefined') return 'unsupported';
    if (Notification.permission === 'denied') return 'denied';
    if (Notification.permission === 'default') return 'default';
    return readOff() ? 'off' : 'on';
  }

  /** Call from a click: asks the browser's permission the first time. */
  async enable(): Promise<NotifyState> {
    if (typeof Notification === 'undefined') return 'unsupported';
    writeOff(false);
    if (Notification.permission === 'default') await Notification.requestPermission();
    return this.state();
  }

  disable(): void {
    writeOff(true);
  }

  /** Show `n` if this tab is hidden, notifications are on, and it was not shown before. */
  show(n: Notice | null): void {
    if (!n || this.seen.has(n.key)) return;
    this.seen.add(n.key);
    if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value!);
    if (document.visibilityState === 'visible' || this.state() !== 'on') return;
    try {
      const shown = new Notification(n.title, { body: n.body, tag: n.key, icon: '/favicon.svg' });
      shown.onclick = () => {
        window.focus();
        this.open(n.sessionId);
        shown.close();
      };
    } catch {
      // a browser that allows notifications only from a service worker: nothing to show
    }
  }
}

function readOff(): boolean {
  try {
    return localStorage.getItem(OFF_KEY) === 'off';
  } catch {
    return false;
  }
}

function writeOff(off: boolean): void {
  try {
    if (off) localStorage.setItem(OFF_KEY, 'off');
    else localStorage.removeItem(OFF_KEY);
  } catch {
    // storage disabled: the choice lasts as long as the page
  }
}
