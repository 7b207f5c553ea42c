/** Colours of the terminal UI (Ink/chalk colour names; `undefined` = terminal default). */
export const theme = {
  accent: 'cyan',
  user: 'whiteBright',
  agent: 'magentaBright',
  text: undefined as string | undefined,
  muted: 'gray',
  border: 'gray',
  success: 'green',
  warning: 'yellow',
  error: 'red',
  command: 'whiteBright',
  output: 'gray',
  stderr: 'redBright',
  code: 'cyan',
  heading: 'whiteBright',
} as const;
