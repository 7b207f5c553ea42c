/**
 * The TUI's keys: bracketed paste, Ctrl-C twice / Ctrl-D to detach, PgUp/PgDn, y/a/n/Esc
 * while an approval is asked, Ctrl-O for the pager of a call's output (pager.tsx), Esc to interrupt, Tab to complete a command, and the rest
 * to the editor (input.ts). Keys are read against the latest state, not the last render.
 */
import type { Key } from 'ink';
import { suggest } from './commands.js';
import { askedApproval, type TuiController } from './controller.js';
import type { Arm, SetState } from './hooks.js';
import { editInput, emptyInput, setValue, type InputState } from './input.js';
import { sessionInfoStatus } from './session-info.js';
import type { Scroll } from './use-scroll.js';
import { pagerKey, togglePager, type PagerKeys } from './pager.js';

export interface KeyContext {
  controller: TuiController;
  /** The editor's latest state. */
  input: { readonly current: InputState };
  setInput: SetState<InputState>;
  /** Inside a bracketed paste. */
  pasting: { current: boolean };
  ctrlC: Arm;
  scroll: Scroll;
  quit: () => void;
  /** Enter on a non-empty editor. */
  submit: (text: string) => void;
  /** The Ctrl-O pager of a call's whole output. */
  pager: PagerKeys;
}

/** Bracketed paste markers (enabled by `agentd attach`); true when `ch` was one. */
function pasteMarker(ch: string, k: KeyContext): boolean {
  if (ch === '[200~') k.pasting.current = true;
  else if (ch === '[201~') k.pasting.current = false;
  else return false;
  return true;
}

/** Ctrl-C clears the editor, else arms, else detaches; Ctrl-D on an empty editor detaches. True when handled. */
function detachKeys(ch: string, key: Key, k: KeyContext): boolean {
  const input = k.input.current;
  if (key.ctrl && ch === 'c') {
    if (input.value !== '') k.setInput((s) => emptyInput(s.history));
    else if (k.ctrlC.isArmed()) k.quit();
    else k.ctrlC.arm();
    return true;
  }
  k.ctrlC.disarm();
  if (key.ctrl && ch === 'd' && input.value === '') {
    k.quit();
    return true;
  }
  return false;
}

/** y / a / n / Esc while an approval is asked (every other key is swallowed). */
function approvalKeys(ch: string, key: Key, controller: TuiController): void {
  const c = ch.toLowerCase();
  if (c === 'y') void controller.answerApproval('approve');
  else if (c === 'a') void controller.answerApproval('approve_for_session');
  else if (c === 'n') void controller.answerApproval('deny');
  else if (key.escape) void controller.interrupt();
}

export function handleKey(ch: string, key: Key, k: KeyContext): void {
  if (pasteMarker(ch, k)) return;
  if (k.pasting.current && !key.escape) {
    k.setInput((s) => editInput(s, ch || (key.return ? '\r' : ''), {}, true).state);
    return;
  }
  if (detachKeys(ch, key, k)) return;
  if (key.ctrl && ch === 'o') return togglePager(k.pager);
  if (k.pager.state.callId !== null) return pagerKey(ch, key, k.pager);
  if (key.pageUp) return k.scroll.pageUp();
  if (key.pageDown) return k.scroll.pageDown();
  const live = k.controller.getState();
  if (askedApproval(live)) return approvalKeys(ch, key, k.controller);
  const input = k.input.current;
  if (key.escape) {
    if (sessionInfoStatus(live.transcript.info) !== 'idle') void k.controller.interrupt();
    else if (input.value.startsWith('/')) k.setInput((s) => emptyInput(s.history));
    else if (k.scroll.scrolled()) k.scroll.follow();
    return;
  }
  if (key.tab) {
    const first = suggest(input.value)[0];
    if (first) k.setInput((s) => setValue(s, `/${first.name}${first.args ? ' ' : ''}`));
    return;
  }
  const r = editInput(input, ch, key, k.pasting.current);
  if (r.submit !== undefined) {
    k.setInput(r.state);
    k.submit(r.submit);
  } else if (r.handled) k.setInput(r.state);
}
