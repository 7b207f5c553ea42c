/**
 * The streaming transcript of the open session. Scrolling near the top loads the previous
 * history page (keeping the view where it was); new output keeps the view at the bottom
 * when it was there. `data-sequences` lists the batch sequences shown, in order.
 */
import { memo } from 'preact/compat';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Item } from '../fold';
import { Markdown } from '../markdown';
import type { SessionView, Store } from '../store';
import { argsLine } from './format';
import { EditDiff } from './Diff';

function ToolCall({ item, expanded }: { item: Extract<Item, { kind: 'tool' }>; expanded: boolean }) {
  const [open, setOpen] = useState<boolean | null>(null);
  const isOpen = open ?? expanded;
  const label = item.status === 'waiting' ? 'awaiting approval' : item.status;
  return (
    <details
      class={`tool ${item.status}`}
      open={isOpen}
      data-call={item.callId}
      onToggle={(e) => {
        const now = (e.currentTarget as HTMLDetailsElement).open;
        if (now !== isOpen) setOpen(now);
      }}
    >
      <summary>
        <span class="tool-name">{item.tool}</span>
        <code class="tool-args">{argsLine(item.args)}</code>
        <span class={`tool-status ${item.status}`}>
          {label}
          {item.exitCode !== null ? ` · exit ${item.exitCode}` : ''}
          {item.decision ? ` · ${item.decision.replace(/_/g, ' ')}` : ''}
        </span>
      </summary>
      {item.tool === 'edit_file' ? (
        <EditDiff output={item.output} args={item.args} />
      ) : (
        <pre class="tool-output">{item.output || (item.status === 'running' ? '…' : item.status === 'waiting' ? 'waiting for approval…' : '(no output)')}</pre>
      )}
    </details>
  );
}

/**
 * A message, reply or reasoning block: who said it, then the text — a user's as typed
 * (line breaks kept), the agent's as Markdown.
 */
function Said({ cls, seq, who, text, markdown }: { cls: string; seq: number; who: string; text: string; markdown?: boolean }) {
  return (
    <li class={cls} data-seq={seq}>
      <div class="who">{who}</div>
      {markdown ? <Markdown text={text} /> : <div class="text">{text}</div>}
    </li>
  );
}

const Row = memo(
  function Row({ item, expanded, onOpen }: { item: Item; rev: number; expanded: boolean; onOpen: (id: string) => void }) {
    switch (item.kind) {
      case 'user':
        return <Said cls="msg user" seq={item.seq} who={`You${item.mode !== 'turn' ? ` · ${item.mode}` : ''}`} text={item.text} />;
      case 'agent':
        return <Said cls={`msg agent${item.done ? '' : ' streaming'}`} seq={item.seq} who="Agent" text={item.text} markdown />;
      case 'reasoning':
        return <Said cls="reasoning" seq={item.seq} who="Thinking" text={item.text} markdown />;
      case 'tool':
        return (
          <li class="tool-row" data-seq={item.seq}>
            <ToolCall item={item} expanded={expanded} />
          </li>
        );
      case 'turn_start':
        return item.resumed > 0 ? (
          <li class="marker" data-seq={item.seq}>
            turn resumed after a restart or takeover (attempt {item.resumed})
          </li>
        ) : null;
      case 'turn_end':
        return (
          <li class={`turn-end ${item.outcome}`} data-seq={item.seq} data-outcome={item.outcome}>
            {item.outcome === 'complete' ? 'turn complete' : item.outcome === 'interrupted' ? 'interrupted' : 'turn failed'}
            {item.detail && item.detail !== 'interrupted' ? ` — ${item.detail}` : ''}
          </li>
        );
      case 'note':
        return (
          <li class={`note ${item.tone}`} data-seq={item.seq}>
            {item.text}
            {item.sessionLink && (
              <button class="link" onClick={() => onOpen(item.sessionLink!)}>
                open
              </button>
            )}
          </li>
        );
    }
  },
  (a, b) => a.item === b.item && a.rev === b.rev && a.expanded === b.expanded,
);

export function Transcript({ store, view }: { store: Store; view: SessionView }) {
  const box = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const autoLoaded = useRef<number | null>(null);
  const pendingPage = useRef<{ height: number; seq: number | undefined } | null>(null);
  const items = view.folded.items;
  const firstSeq = view.batches[0]?.sequence;

  // Older page prepended: keep the same content under the eye.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    const page = pendingPage.current;
    if (page && page.seq !== firstSeq) {
      el.scrollTop += el.scrollHeight - page.height;
      pendingPage.current = null;
    } else if (!page && atBottom.current) {
      el.scrollTop = el.scrollHeight;
    }
    if (page && view.loading !== 'older' && page.seq === firstSeq) pendingPage.current = null;
    // Nothing to scroll yet but older history exists: load it, as a scroll-up would.
    const replayed = (view.batches[view.batches.length - 1]?.sequence ?? 0) >= view.attachedHead;
    if (!view.loading && replayed && view.nextBefore !== null && el.scrollHeight <= el.clientHeight && autoLoaded.current !== view.nextBefore) {
      autoLoaded.current = view.nextBefore;
      pendingPage.current = { height: el.scrollHeight, seq: firstSeq };
      void store.loadOlder();
    }
  });

  const onScroll = (): void => {
    const el = box.current;
    if (!el) return;
    atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    if (el.scrollTop < 120 && view.nextBefore !== null && !view.loading) {
      pendingPage.current = { height: el.scrollHeight, seq: firstSeq };
      void store.loadOlder();
    }
  };

  // The running tool call and the latest one are expanded; older ones start collapsed.
  let latestTool = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i]!.kind === 'tool') {
      latestTool = i;
      break;
    }
  }
  const open = (id: string): void => store.select(id);

  return (
    <div class="transcript" ref={box} onScroll={onScroll} aria-live="polite" aria-busy={view.loading !== null}>
      {view.nextBefore !== null && (
        <button class="older" disabled={view.loading === 'older'} onClick={() => void store.loadOlder()}>
          {view.loading === 'older' ? 'Loading older history…' : 'Load older history'}
        </button>
      )}
      {view.nextBefore === null && view.batches.length > 0 && <p class="start">Beginning of the session</p>}
      {view.loading === 'attaching' && <p class="hint center">Loading the session…</p>}
      {view.error && <p class="error-text center">{view.error}</p>}
      {!view.loading && !view.error && items.filter((i) => i.kind !== 'turn_start').length === 0 && (
        <div class="empty small">
          <h2>Nothing here yet</h2>
          <p>Send a message below to start a turn.</p>
        </div>
      )}
      <ol class="items" data-sequences={view.batches.map((b) => b.sequence).join(',')}>
        {items.map((item, i) => (
          <Row
            key={item.key}
            item={item}
            rev={item.rev}
            expanded={item.kind === 'tool' && (i === latestTool || item.status === 'running' || item.status === 'waiting')}
            onOpen={open}
          />
        ))}
      </ol>
    </div>
  );
}
