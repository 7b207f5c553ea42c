/**
 * Markdown tokens (marked's lexer) to Preact elements — never to an HTML string, so no
 * model text is ever parsed as HTML: raw HTML is shown as text, a link is an `<a>` only
 * for an http(s)/mailto address (opening in a new tab, `rel="noopener noreferrer"`), and
 * an image is never loaded (a link to it, or its text).
 */
import type { ComponentChildren, JSX } from 'preact';
import type { MarkedToken, Token, Tokens } from 'marked';
import { CodeBlock } from './CodeBlock';
import { decodeEntities, safeHref } from './safe';

const asMarked = (t: Token): MarkedToken => t as MarkedToken;

/** Text that must stay visible exactly as the model wrote it. */
const Inert = ({ raw }: { raw: string }) => <span class="md-inert">{raw}</span>;

function link(t: Tokens.Link, key: number): JSX.Element {
  const href = safeHref(t.href);
  if (!href) return <Inert key={key} raw={t.raw} />;
  return (
    <a key={key} href={href} title={t.title ?? undefined} target="_blank" rel="noopener noreferrer">
      {inline(t.tokens)}
    </a>
  );
}

/** An image is never fetched: a link to it (http/https) or its Markdown as text. */
function image(t: Tokens.Image, key: number): JSX.Element {
  const href = safeHref(t.href);
  if (!href || href.startsWith('mailto:')) return <Inert key={key} raw={t.raw} />;
  return (
    <a key={key} class="md-image" href={href} target="_blank" rel="noopener noreferrer" title={`image (not loaded): ${href}`}>
      {t.text ? `image: ${decodeEntities(t.text)}` : 'image'}
    </a>
  );
}

export function inline(tokens: readonly Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map((raw, key) => {
    const t = asMarked(raw);
    switch (t.type) {
      case 'text':
        return t.tokens && t.tokens.length > 0 && !(t.tokens.length === 1 && t.tokens[0] === t) ? (
          <span key={key}>{inline(t.tokens)}</span>
        ) : (
          decodeEntities(t.text)
        );
      case 'escape':
        return t.text;
      case 'strong':
        return <strong key={key}>{inline(t.tokens)}</strong>;
      case 'em':
        return <em key={key}>{inline(t.tokens)}</em>;
      case 'del':
        return <del key={key}>{inline(t.tokens)}</del>;
      case 'codespan':
        return <code key={key}>{t.text}</code>;
      case 'br':
        return <br key={key} />;
      case 'link':
        return link(t, key);
      case 'image':
        return image(t, key);
      case 'checkbox':
        return <input key={key} type="checkbox" class="md-task" checked={t.checked} disabled aria-label={t.checked ? 'done' : 'not done'} />;
      case 'html':
        return <Inert key={key} raw={t.raw} />;
      default:
        return raw.raw;
    }
  });
}

function listItem(item: Tokens.ListItem, key: number): JSX.Element {
  return (
    <li key={key} class={item.task ? 'md-task-item' : undefined}>
      {item.loose ? blocks(item.tokens) : item.tokens.map((t, i) => (t.type === 'text' || t.type === 'checkbox' ? inline([t])[0] : block(t, i)))}
    </li>
  );
}

function table(t: Tokens.Table, key: number): JSX.Element {
  const align = (a: Tokens.TableCell['align']): string | undefined => (a ? `md-${a}` : undefined);
  return (
    <div key={key} class="md-table">
      <table>
        <thead>
          <tr>
            {t.header.map((c, i) => (
              <th key={i} class={align(c.align)}>
                {inline(c.tokens)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {t.rows.map((row, r) => (
            <tr key={r}>
              {row.map((c, i) => (
                <td key={i} class={align(c.align)}>
                  {inline(c.tokens)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** One block token. */
export function block(raw: Token, key: number): ComponentChildren {
  const t = asMarked(raw);
  switch (t.type) {
    case 'space':
    case 'def':
      return null;
    case 'heading': {
      const H = `h${Math.min(Math.max(t.depth, 1), 6)}` as 'h1';
      return (
        <H key={key} class="md-heading">
          {inline(t.tokens)}
        </H>
      );
    }
    case 'paragraph':
      return <p key={key}>{inline(t.tokens)}</p>;
    case 'text':
      return <p key={key}>{t.tokens ? inline(t.tokens) : decodeEntities(t.text)}</p>;
    case 'code':
      return <CodeBlock key={key} token={t} />;
    case 'blockquote':
      return <blockquote key={key}>{blocks(t.tokens)}</blockquote>;
    case 'hr':
      return <hr key={key} />;
    case 'list': {
      const items = t.items.map(listItem);
      return t.ordered ? (
        <ol key={key} start={t.start === '' || t.start === 1 ? undefined : Number(t.start)}>
          {items}
        </ol>
      ) : (
        <ul key={key} class={t.items.some((i) => i.task) ? 'md-tasks' : undefined}>
          {items}
        </ul>
      );
    }
    case 'table':
      return table(t, key);
    case 'html':
      // Raw HTML is shown as the model wrote it, never rendered.
      return (
        <p key={key} class="md-html">
          <Inert raw={t.raw.replace(/\n+$/, '')} />
        </p>
      );
    default:
      return raw.raw ? <p key={key}>{raw.raw}</p> : null;
  }
}

export function blocks(tokens: readonly Token[]): ComponentChildren[] {
  return tokens.map((t, i) => block(t, i));
}
