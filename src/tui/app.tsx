/**
 * The attach TUI: transcript viewport, approval prompt, input box and status line,
 * laid out to fill the terminal. Keys: keymap.ts (help: commands.ts KEYS_HELP); slash
 * commands: slash-commands.ts; scrolling: use-scroll.ts.
 */
import { Box, useApp, useInput, type Key } from 'ink';
import { useCallback, useEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { ApprovalPrompt, approvalPromptHeight, callRowsFor } from './approval-prompt.js';
import { parseCommand, suggest } from './commands.js';
import { approvalTarget, type TuiController } from './controller.js';
import { useArm, useSyncState, useTerminalSize } from './hooks.js';
import { commit, emptyInput, setValue, type InputState } from './input.js';
import { DEFAULT_PLACEHOLDER, InputBox, inputBoxHeight } from './input-box.js';
import { handleKey, type KeyContext } from './keymap.js';
import { layoutTranscript } from './layout.js';
import { PAGER_HINT, Pager, closedPager, toolCalls, type PagerKeys, type PagerState } from './pager.js';
import { Rows } from './rows.js';
import { runSlashCommand } from './slash-commands.js';
import { StatusLine } from './status-line.js';
import { seg, type Line } from './text.js';
import { theme } from './theme.js';
import { Transcript, historyBanner } from './transcript-view.js';
import { useScroll } from './use-scroll.js';

export interface AppProps {
  controller: TuiController;
  /** Fixed terminal size (tests); default: the real terminal, following resizes. */
  columns?: number;
  rows?: number;
  /** Called when the user detaches (/quit, Ctrl-C twice, Ctrl-D on an empty line). */
  onQuit?: () => void;
}

/** How long the first Ctrl-C stays armed. */
const CTRL_C_WINDOW_MS = 2000;

/** Rows of the command suggestions for what is typed. */
function suggestionRows(value: string): Line[] {
  return suggest(value)
    .slice(0, 6)
    .map((c) => [
      seg(`  /${c.name}`, { color: theme.accent, bold: true }),
      seg(c.args ? ` ${c.args}` : '', { color: theme.muted }),
      seg(`  ${c.help}`, { color: theme.muted }),
    ]);
}

export function App({ controller, columns, rows, onQuit }: AppProps) {
  const view = useSyncExternalStore(controller.subscribe, controller.getState);
  const size = useTerminalSize(columns, rows);
  const { exit } = useApp();
  const [input, setInput, inputRef] = useSyncState<InputState>(() => emptyInput());
  const ctrlC = useArm(CTRL_C_WINDOW_MS);
  const pasting = useRef(false);
  const [pager, setPager, pagerRef] = useSyncState<PagerState>(closedPager);

  const width = Math.max(20, size.columns);
  const info = view.transcript.info;
  const target = approvalTarget(view);
  const asked = target?.request ?? null;
  const askedChild = target?.child ? target.sessionId : undefined;

  // ---- layout ----
  const textWidth = width - 2;
  const hasOlder = view.nextBeforeSequence !== null;
  const lines = useMemo<Line[]>(() => {
    const body = layoutTranscript(view.transcript.items, view.notes, textWidth, view.showReasoning);
    if (view.sessionId === null) return [[seg('  connecting…', { color: theme.muted })], ...body];
    return [historyBanner(hasOlder, view.loadingHistory), [], ...body];
  }, [view.transcript.items, view.notes, textWidth, hasOlder, view.loadingHistory, view.sessionId, view.showReasoning]);

  // The pager closes when an approval is asked (y / a / n must reach the prompt).
  const approvalId = asked?.approval_id ?? null;
  useEffect(() => {
    if (approvalId !== null) setPager(closedPager);
  }, [approvalId, setPager]);
  const paged = pager.callId === null || asked ? undefined : toolCalls(view.transcript.items).find((c) => c.callId === pager.callId);
  const pagerH = Math.max(2, size.rows - 2);

  const suggestions = asked ? [] : suggestionRows(input.value);
  const callRowsMax = callRowsFor(size.rows);
  const approvalH = asked ? approvalPromptHeight(asked, width, askedChild, callRowsMax) : 0;
  const inputH = asked ? 0 : inputBoxHeight(input, width, DEFAULT_PLACEHOLDER);
  const statusH = 1;
  const transcriptH = Math.max(1, size.rows - 1 - statusH - approvalH - inputH - suggestions.length);
  const scroll = useScroll(lines.length, transcriptH, view.transcript.prepends, () => {
    if (hasOlder) void controller.loadOlder();
  });

  // ---- actions ----
  const quit = useCallback(() => {
    onQuit?.();
    exit();
  }, [exit, onQuit]);

  const submit = (text: string) => {
    if (text.trim() === '') return;
    setInput((s) => commit(s, text));
    scroll.follow();
    const cmd = parseCommand(text);
    if (cmd) {
      runSlashCommand(cmd, controller, quit);
      return;
    }
    const message = text.startsWith('//') ? text.slice(1) : text;
    void controller.sendMessage(message).then((ok) => {
      if (!ok) setInput((s) => (s.value === '' ? setValue(s, text) : s));
    });
  };

  const pagerKeys: PagerKeys = {
    state: pagerRef.current,
    setState: setPager,
    items: view.transcript.items,
    width: textWidth,
    height: pagerH,
    onEmpty: () => controller.note('info', 'no tool call to show yet (ctrl-o shows the output of the latest call)'),
  };
  const keys: KeyContext = { controller, input: inputRef, setInput, pasting, ctrlC, scroll, quit, submit, pager: pagerKeys };
  // One stable subscription that always calls the handler of the latest render.
  const keysRef = useRef(keys);
  keysRef.current = keys;
  useInput(useCallback((ch: string, key: Key) => handleKey(ch, key, keysRef.current), []));

  const status = (hint: string | undefined) => (
    <StatusLine
      info={info}
      conn={view.conn}
      width={width}
      interrupting={view.interruptingTurn !== null}
      ctrlCArmed={ctrlC.armed}
      hint={hint}
    />
  );
  if (paged) {
    return (
      <Box flexDirection="column" width={width}>
        <Box paddingX={1} flexDirection="column" height={pagerH}>
          <Pager item={paged} width={textWidth} height={pagerH} top={pager.top} />
        </Box>
        {status(PAGER_HINT)}
      </Box>
    );
  }
  return (
    <Box flexDirection="column" width={width}>
      <Box paddingX={1} flexDirection="column">
        <Transcript lines={lines} height={transcriptH} scrollTop={scroll.scrollTop} />
      </Box>
      {asked ? <ApprovalPrompt request={asked} width={width} subagent={askedChild} maxCallRows={callRowsMax} /> : null}
      {suggestions.length > 0 ? <Rows lines={suggestions} /> : null}
      {asked ? null : <InputBox state={input} width={width} />}
      {status(scroll.scrollTop !== null ? `scrolled · pgup/pgdn · esc to jump to the bottom` : undefined)}
    </Box>
  );
}
