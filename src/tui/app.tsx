/**
 * The attach TUI: transcript viewport, approval prompt, input box and status line,
 * laid out to fill the terminal. Keys: see commands.ts (KEYS_HELP).
 */
import { Box, useApp, useInput, useStdout, type Key } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import type { ApprovalDecision } from '../../protocol/index.js';
import { ApprovalPrompt, approvalPromptHeight } from './approval-prompt.js';
import { parseCommand, suggest, helpText, type ParsedCommand } from './commands.js';
import type { TuiController } from './controller.js';
import { commit, editInput, emptyInput, setValue, type InputState } from './input.js';
import { DEFAULT_PLACEHOLDER, InputBox, inputBoxHeight } from './input-box.js';
import { layoutTranscript } from './layout.js';
import { Rows } from './rows.js';
import { sessionInfoStatus } from './session-info.js';
import { StatusLine } from './status-line.js';
import { seg, type Line } from './text.js';
import { theme } from './theme.js';
import { Transcript, historyBanner, visibleTop } from './transcript-view.js';

export interface AppProps {
  controller: TuiController;
  /** Fixed terminal size (tests); default: the real terminal, following resizes. */
  columns?: number;
  rows?: number;
  /** Called when the user detaches (/quit, Ctrl-C twice, Ctrl-D on an empty line). */
  onQuit?: () => void;
}

export function useTerminalSize(columns?: number, rows?: number): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const get = useCallback(
    () => ({ columns: columns ?? stdout.columns ?? 80, rows: rows ?? stdout.rows ?? 24 }),
    [stdout, columns, rows],
  );
  const [size, setSize] = useState(get);
  useEffect(() => {
    const onResize = () => setSize(get());
    onResize();
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, get]);
  return size;
}

/**
 * State whose latest value is readable synchronously through the ref: key events can
 * arrive several per chunk, before React re-renders, and must each see the previous one.
 */
function useSyncState<T>(initial: T | (() => T)): [T, (next: T | ((prev: T) => T)) => void, { readonly current: T }] {
  const [value, setValue] = useState(initial);
  const ref = useRef(value);
  const set = useCallback((next: T | ((prev: T) => T)) => {
    const v = typeof next === 'function' ? (next as (prev: T) => T)(ref.current) : next;
    ref.current = v;
    setValue(v);
  }, []);
  return [value, set, ref];
}

/** How long the first Ctrl-C stays armed. */
const CTRL_C_WINDOW_MS = 2000;

export function App({ controller, columns, rows, onQuit }: AppProps) {
  const view = useSyncExternalStore(controller.subscribe, controller.getState);
  const size = useTerminalSize(columns, rows);
  const { exit } = useApp();
  const [input, setInput, inputRef] = useSyncState<InputState>(() => emptyInput());
  const [ctrlCArmed, setCtrlCArmed, ctrlCRef] = useSyncState(false);
  const ctrlCTimer = useRef<NodeJS.Timeout | undefined>(undefined);
  const pasting = useRef(false);

  const width = Math.max(20, size.columns);
  const info = view.transcript.info;
  const status = sessionInfoStatus(info);
  const pending = info.pendingApproval;
  const approvalActive = pending !== null && view.answeredApproval !== pending.approval_id;

  // ---- layout ----
  const textWidth = width - 2;
  const hasOlder = view.nextBeforeSequence !== null;
  const lines = useMemo<Line[]>(() => {
    const body = layoutTranscript(view.transcript.items, view.notes, textWidth);
    if (view.sessionId === null) return [[seg('  connecting…', { color: theme.muted })], ...body];
    return [historyBanner(hasOlder, view.loadingHistory), [], ...body];
  }, [view.transcript.items, view.notes, textWidth, hasOlder, view.loadingHistory, view.sessionId]);

  const suggestions = approvalActive ? [] : suggest(input.value).slice(0, 6);
  const suggestionRows: Line[] = suggestions.map((c) => [
    seg(`  /${c.name}`, { color: theme.accent, bold: true }),
    seg(c.args ? ` ${c.args}` : '', { color: theme.muted }),
    seg(`  ${c.help}`, { color: theme.muted }),
  ]);
  const approvalH = pending && approvalActive ? approvalPromptHeight(pending, width) : 0;
  const inputH = approvalActive ? 0 : inputBoxHeight(input, width, DEFAULT_PLACEHOLDER);
  const statusH = 1;
  const transcriptH = Math.max(1, size.rows - 1 - statusH - approvalH - inputH - suggestionRows.length);

  // ---- scrolling: scrollTop is the first visible row, null = follow the bottom ----
  const [scrollTop, setScrollTop, scrollRef] = useSyncState<number | null>(null);
  const [seenPrepends, setSeenPrepends] = useState(view.transcript.prepends);
  const lastTotal = useRef(lines.length);
  if (seenPrepends !== view.transcript.prepends) {
    // Older history was merged in front: keep the same rows in view.
    const delta = lines.length - lastTotal.current;
    setSeenPrepends(view.transcript.prepends);
    if (scrollTop !== null) setScrollTop(Math.max(0, scrollTop + delta));
  }
  useEffect(() => {
    lastTotal.current = lines.length;
  });

  const page = Math.max(1, transcriptH - 2);
  const pageUp = () => {
    const top = visibleTop(lines.length, transcriptH, scrollRef.current);
    const next = Math.max(0, top - page);
    if (lines.length > transcriptH) setScrollTop(next);
    if (next === 0 && hasOlder) void controller.loadOlder();
  };
  const pageDown = () => {
    const current = scrollRef.current;
    if (current === null) return;
    const maxTop = Math.max(0, lines.length - transcriptH);
    const next = current + page;
    setScrollTop(next >= maxTop ? null : next);
  };

  // ---- actions ----
  const quit = useCallback(() => {
    onQuit?.();
    exit();
  }, [exit, onQuit]);

  useEffect(() => () => clearTimeout(ctrlCTimer.current), []);

  const runCommand = (cmd: ParsedCommand) => {
    switch (cmd.name) {
      case 'help':
        controller.note('info', 'commands and keys', helpText());
        return;
      case 'model':
        if (cmd.args.length === 0) {
          const m = info.model;
          controller.note('info', m ? `model: ${m.route} (${m.model})` : 'model: unknown', 'switch with /model ROUTE [EFFORT]');
        } else {
          void controller.setModel(cmd.args[0]!, cmd.args[1]);
        }
        return;
      case 'sessions':
        void controller.listSessions();
        return;
      case 'attach':
        if (cmd.args.length !== 1) controller.note('error', 'usage: /attach SESSION_ID');
        else void controller.switchTo(cmd.args[0]!);
        return;
      case 'new':
        void controller.newSession();
        return;
      case 'steer':
        if (cmd.rest === '') controller.note('error', 'usage: /steer TEXT');
        else void controller.sendMessage(cmd.rest, 'steer');
        return;
      case 'interrupt':
        if (status === 'idle') controller.note('info', 'nothing to interrupt');
        else void controller.interrupt();
        return;
      case 'reconnect':
        controller.reconnectNow();
        return;
      case 'quit':
        quit();
        return;
      default:
        controller.note('error', `unknown command /${cmd.name} — try /help`);
    }
  };

  const submit = (text: string) => {
    if (text.trim() === '') return;
    setInput((s) => commit(s, text));
    setScrollTop(null);
    const cmd = parseCommand(text);
    if (cmd) {
      runCommand(cmd);
      return;
    }
    const message = text.startsWith('//') ? text.slice(1) : text;
    void controller.sendMessage(message).then((ok) => {
      if (!ok) setInput((s) => (s.value === '' ? setValue(s, text) : s));
    });
  };

  const answer = (decision: ApprovalDecision) => {
    void controller.answerApproval(decision);
  };

  const onKey = (ch: string, key: Key) => {
    const input = inputRef.current;
    const live = controller.getState();
    const livePending = live.transcript.info.pendingApproval;
    const approvalActive = livePending !== null && live.answeredApproval !== livePending.approval_id;
    const status = sessionInfoStatus(live.transcript.info);
    const suggestions = approvalActive ? [] : suggest(input.value);
    // Bracketed paste markers (enabled by `agentd attach`).
    if (ch === '[200~') {
      pasting.current = true;
      return;
    }
    if (ch === '[201~') {
      pasting.current = false;
      return;
    }
    if (pasting.current && !key.escape) {
      setInput((s) => editInput(s, ch || (key.return ? '\r' : ''), {}, true).state);
      return;
    }
    if (key.ctrl && ch === 'c') {
      if (input.value !== '') {
        setInput((s) => emptyInput(s.history));
        return;
      }
      if (ctrlCRef.current) {
        quit();
        return;
      }
      setCtrlCArmed(true);
      clearTimeout(ctrlCTimer.current);
      ctrlCTimer.current = setTimeout(() => setCtrlCArmed(false), CTRL_C_WINDOW_MS);
      return;
    }
    if (ctrlCRef.current) setCtrlCArmed(false);
    if (key.ctrl && ch === 'd' && input.value === '') {
      quit();
      return;
    }
    if (key.pageUp) {
      pageUp();
      return;
    }
    if (key.pageDown) {
      pageDown();
      return;
    }
    if (approvalActive) {
      const c = ch.toLowerCase();
      if (c === 'y') answer('approve');
      else if (c === 'a') answer('approve_for_session');
      else if (c === 'n') answer('deny');
      else if (key.escape) void controller.interrupt();
      return;
    }
    if (key.escape) {
      if (status !== 'idle') void controller.interrupt();
      else if (input.value.startsWith('/')) setInput((s) => emptyInput(s.history));
      else if (scrollRef.current !== null) setScrollTop(null);
      return;
    }
    if (key.tab) {
      const first = suggestions[0];
      if (first) setInput((s) => setValue(s, `/${first.name}${first.args ? ' ' : ''}`));
      return;
    }
    const r = editInput(input, ch, key, pasting.current);
    if (r.submit !== undefined) {
      setInput(r.state);
      submit(r.submit);
    } else if (r.handled) setInput(r.state);
  };
  // One stable subscription that always calls the handler of the latest render.
  const onKeyRef = useRef(onKey);
  onKeyRef.current = onKey;
  useInput(useCallback((ch: string, key: Key) => onKeyRef.current(ch, key), []));

  return (
    <Box flexDirection="column" width={width}>
      <Box paddingX={1} flexDirection="column">
        <Transcript lines={lines} height={transcriptH} scrollTop={scrollTop} />
      </Box>
      {pending && approvalActive ? <ApprovalPrompt request={pending} width={width} /> : null}
      {suggestionRows.length > 0 ? <Rows lines={suggestionRows} /> : null}
      {approvalActive ? null : <InputBox state={input} width={width} />}
      <StatusLine
        info={info}
        conn={view.conn}
        width={width}
        interrupting={view.interruptingTurn !== null}
        ctrlCArmed={ctrlCArmed}
        hint={scrollTop !== null ? `scrolled · pgup/pgdn · esc to jump to the bottom` : undefined}
      />
    </Box>
  );
}
