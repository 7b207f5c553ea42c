/**
 * Shell allow rules (docs/tools.md "Shell allow rules"): which `shell` commands never wait
 * for approval under `ask`. A rule matches the whole command exactly, or — when it ends with
 * `*` — any command starting with the text before the `*`. A command holding a character
 * that chains, substitutes or redirects (`;` `&` `|` `` ` `` `$(` `>` `<` or a newline)
 * matches only an exact rule: `npm test; rm -rf x` never matches `npm test*`. Pure.
 */

/** Characters (and `$(`) after which a prefix rule no longer says what the command does. */
const DANGEROUS = /[;&|`><\n\r]|\$\(/;

/** Whether `command` may run without approval under the given rules. */
export function shellCommandAllowed(command: string, rules: readonly string[]): boolean {
  if (rules.length === 0) return false;
  const prefixOk = !DANGEROUS.test(command);
  for (const rule of rules) {
    if (rule === command) return true;
    if (prefixOk && rule.endsWith('*') && command.startsWith(rule.slice(0, -1))) return true;
  }
  return false;
}

/** The command of a `shell` call's arguments, or null when it has none. */
export function shellCommandOf(args: Readonly<Record<string, unknown>>): string | null {
  return typeof args.command === 'string' ? args.command : null;
}
