/**
 * G4: token usage read from the provider's answer as it streams past, without holding the answer.
 * A streamed answer reports usage in `message_start` (input, cache) and `message_delta` (output,
 * cumulative); a plain JSON answer carries one `usage` object. Only `data:` lines that mention
 * usage are parsed; a line longer than the bound is skipped, not buffered.
 */

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheCreationTokens: number;
}

/** A `data:` line longer than this is not parsed (usage lines are short; text deltas may be long). */
const MAX_LINE_BYTES = 64 * 1024;
/** A JSON answer larger than this is not parsed for usage. */
const MAX_JSON_BYTES = 8 * 1024 * 1024;

type RawUsage = { input_tokens?: unknown; output_tokens?: unknown; cache_read_input_tokens?: unknown; cache_creation_input_tokens?: unknown };

const count = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined);

export class UsageReader {
  private readonly streamed: boolean;
  private readonly json: boolean;
  private line = '';
  private skipping = false;
  private body: Buffer[] = [];
  private bodyBytes = 0;
  private seen = false;
  private input = 0;
  private output = 0;
  private cacheRead = 0;
  private cacheCreation = 0;

  constructor(contentType: string) {
    this.streamed = contentType.includes('text/event-stream');
    this.json = !this.streamed && contentType.includes('application/json');
  }

  push(chunk: Buffer): void {
    if (this.streamed) this.scan(chunk.toString('utf8'));
    else if (this.json && this.bodyBytes + chunk.length <= MAX_JSON_BYTES) {
      this.body.push(chunk);
      this.bodyBytes += chunk.length;
    } else this.body = [];
  }

  /** The usage read so far (the whole answer's once it ended), or null when none was reported. */
  total(): TokenUsage | null {
    if (this.json && this.body.length > 0) {
      try {
        const parsed = JSON.parse(Buffer.concat(this.body).toString('utf8')) as { usage?: RawUsage };
        this.add(parsed.usage, true);
      } catch {
        // not JSON after all: no usage
      }
      this.body = [];
    }
    return this.seen ? { inputTokens: this.input, outputTokens: this.output, cacheReadTokens: this.cacheRead, cacheCreationTokens: this.cacheCreation } : null;
  }

  private scan(text: string): void {
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      const piece = text.slice(start, end);
      if (!this.skipping) this.onLine((this.line + piece).replace(/\r$/, ''));
      this.line = '';
      this.skipping = false;
      start = end + 1;
    }
    if (this.skipping) return;
    this.line += text.slice(start);
    if (this.line.length > MAX_LINE_BYTES) {
      this.line = '';
      this.skipping = true;
    }
  }

  private onLine(line: string): void {
    if (!line.startsWith('data:') || !line.includes('"usage"')) return;
    try {
      const event = JSON.parse(line.slice('data:'.length)) as { type?: string; message?: { usage?: RawUsage }; usage?: RawUsage };
      if (event.type === 'message_start') this.add(event.message?.usage, false);
      else if (event.type === 'message_delta') this.add(event.usage, true);
    } catch {
      // a malformed line is the CLI's to complain about
    }
  }

  /** Input and cache counts are absolute; output in a delta is the running total, so the last one wins. */
  private add(usage: RawUsage | undefined, final: boolean): void {
    if (usage === undefined || usage === null || typeof usage !== 'object') return;
    this.seen = true;
    this.input = count(usage.input_tokens) ?? this.input;
    this.cacheRead = count(usage.cache_read_input_tokens) ?? this.cacheRead;
    this.cacheCreation = count(usage.cache_creation_input_tokens) ?? this.cacheCreation;
    const output = count(usage.output_tokens);
    if (output !== undefined && (final || this.output === 0)) this.output = output;
  }
}
