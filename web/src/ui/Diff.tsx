/**
 * An `edit_file` call shown as a diff: its result's unified diff once it ran, else (while
 * it waits for approval or runs) the change its arguments propose. Added, removed and hunk
 * lines are coloured (the line rules are shared with the terminal UI: src/render/diff.ts).
 */
import { diffLineKind, editPreview } from '../../../src/render/diff.js';

/** The diff view of an edit_file call: its output's diff when it has one, else the preview. */
export function EditDiff({ output, args }: { output: string; args: unknown }) {
  // "edited PATH: N replacements\n--- a/PATH…" once applied; an error line (or nothing yet) otherwise.
  const at = output.indexOf('\n--- ');
  const head = at >= 0 ? output.slice(0, at) : output;
  const text = at >= 0 ? output.slice(at + 1) : editPreview(args);
  return (
    <pre class="tool-output diff">
      {head ? <div class="diff-line meta">{head}</div> : null}
      {text.split('\n').map((line, i) => (
        <div key={i} class={`diff-line ${diffLineKind(line)}`}>
          {line || ' '}
        </div>
      ))}
    </pre>
  );
}
