/**
 * Reading a daemon's GET /metrics in tests: fetch it (with or without the token) and parse
 * the Prometheus text exposition format strictly (every line a comment, a blank, or
 * `name{label="value",…} number`), then look values up by name and labels.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** `# TYPE` of each metric family. */
  types: Map<string, string>;
  /** The value of the one sample with this name and (at least) these labels; 0 if none. */
  value(name: string, labels?: Record<string, string>): number;
  /** Sum over every sample with this name and (at least) these labels. */
  sum(name: string, labels?: Record<string, string>): number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  let consumed = 0;
  for (let m = LABEL.exec(text); m; m = LABEL.exec(text)) {
    labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    consumed = LABEL.lastIndex;
  }
  if (consumed !== text.length) throw new Error(`bad labels in metrics line: ${line}`);
  return labels;
}

function parseValue(raw: string, line: string): number {
  // Prometheus reads values with Go's ParseFloat: NaN and Inf in any letter case.
  const word = raw.toLowerCase();
  if (word === '+inf' || word === 'inf') return Infinity;
  if (word === '-inf') return -Infinity;
  if (word === 'nan') return NaN;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`bad value in metrics line: ${line}`);
  return n;
}

export function parsePrometheus(text: string): Scrape {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      else if (!/^# HELP \S+ /.test(line)) throw new Error(`bad comment in metrics: ${line}`);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad metrics line: ${line}`);
    samples.push({ name: m[1]!, labels: m[2] ? parseLabels(m[2], line) : {}, value: parseValue(m[3]!, line) });
  }
  const matching = (name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    types,
    value(name, labels = {}) {
      const found = matching(name, labels);
      if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
      return found[0]?.value ?? 0;
    },
    sum: (name, labels = {}) => matching(name, labels).reduce((a, s) => a + s.value, 0),
  };
}

/** GET /metrics of a daemon at `httpUrl`; `token` null sends no Authorization header. */
export async function fetchMetrics(httpUrl: string, token: string | null): Promise<Response> {
  return fetch(`${httpUrl}/metrics`, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });
}

/** GET /metrics with the token, parsed (fails on anything but a 200). */
export async function scrape(daemon: { httpUrl: string; token: string | null }): Promise<Scrape> {
  const res = await fetchMetrics(daemon.httpUrl, daemon.token);
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}: ${body}`);
  return parsePrometheus(body);
}
