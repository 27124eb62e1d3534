import { escapeForDisplay } from '../../preload/display.js';
import type { JournalEvent } from '../store/journal.js';

const MAX_SUMMARY = 200;


type Payload = Record<string, unknown>;

function oneLine(text: string, max = MAX_SUMMARY): string {
  return escapeForDisplay(text, max).replace(/\n/g, '\\n');
}

function formatBytes(bytes: unknown): string {
  const n = typeof bytes === 'number' ? bytes : 0;
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A compact summary of the run-loop events; null for events summarized by their text. */
function summarize(type: string, payload: Payload): string | null {
  switch (type) {
    case 'tool_call':
      return `→ ${oneLine(String(payload.tool))} ${oneLine(JSON.stringify(payload.arguments ?? null), 120)}`;
    case 'tool_result':
      return `← ${oneLine(String(payload.tool))} ${payload.ok === true ? 'ok' : `error${typeof payload.errorCode === 'string' ? ` (${oneLine(payload.errorCode, 40)})` : ''}`} ${formatBytes(payload.bytes)} ${Math.round(Number(payload.durationMs ?? 0))} ms`;
    case 'tool_refused':
      return `✗ ${oneLine(String(payload.tool))} refused: ${oneLine(String(payload.reason ?? ''))}`;
    case 'tool_drained':
      return `⋯ ${oneLine(String(payload.tool))} finished after the stop: ${payload.ok === true ? 'ok' : `error (${oneLine(String(payload.errorCode ?? 'error'), 40)})`} ${Math.round(Number(payload.durationMs ?? 0))} ms`;
    case 'usage':
      return `${Number(payload.inputTokens ?? 0)} in / ${Number(payload.outputTokens ?? 0)} out tokens${typeof payload.costUsd === 'number' ? `, $${payload.costUsd.toFixed(4)}` : ''}`;
    case 'run_started':
      return `${oneLine(String(payload.agent))}@${String(payload.agentVersion)} ${oneLine(String(payload.model))} (${String(payload.session)} session)`;
    case 'run_stopping':
      return `stopping: ${oneLine(String(payload.reason ?? ''))}`;
    case 'run_finished':
      return `${String(payload.state)}${typeof payload.reason === 'string' ? `: ${oneLine(payload.reason, 400)}` : ''}`;
    case 'diagnostic':
      return `${oneLine(String(payload.reason ?? ''))}: ${oneLine(String(payload.detail ?? ''))}`;
    case 'permission_decision':
      return `${payload.decision === 'allow' ? 'allowed' : 'denied'} ${oneLine(String(payload.tool))} ${oneLine(String(payload.value ?? ''), 160)}: ${oneLine(String(payload.reason ?? ''))}`;
    default:
      return null;
  }
}

/** One human line per journal event: `#seq time type summary`. */
export function formatEvent(event: JournalEvent): string {
  const time = event.createdAt.slice(11, 23);
  const payload = (event.payload ?? {}) as Payload;
  const summary = typeof payload === 'object' ? summarize(event.type, payload) : null;
  const text = summary ?? (typeof payload.text === 'string' ? oneLine(payload.text) : oneLine(JSON.stringify(event.payload) ?? 'null'));
  return `#${event.seq} ${time} ${event.type}  ${text}`;
}

/** What the live view already printed of the text block being streamed. */
export interface StreamedText {
  text: string;
}

export function newStreamedText(): StreamedText {
  return { text: '' };
}

const unbounded = (text: string) => escapeForDisplay(text, Number.MAX_SAFE_INTEGER);

/**
 * The live view of `ward run`: the model's text as it arrives (deltas as they come, then only
 * the part of the final text not yet printed; escaped, unbounded), the tool timeline and
 * problems as short lines. Null for events the live view does not show.
 */
export function formatLive(event: JournalEvent, streamed: StreamedText = newStreamedText()): { stream: 'stdout' | 'stderr'; text: string } | null {
  const payload = (event.payload ?? {}) as Payload;
  switch (event.type) {
    case 'assistant_delta': {
      const text = String(payload.text ?? '');
      streamed.text += text;
      return { stream: 'stdout', text: unbounded(text) };
    }
    case 'assistant_text': {
      const text = String(payload.text ?? '');
      const printed = streamed.text;
      streamed.text = '';
      // The final text is authoritative: it normally just completes what streamed.
      if (printed === '') return { stream: 'stdout', text: `${unbounded(text)}\n` };
      return { stream: 'stdout', text: text.startsWith(printed) ? `${unbounded(text.slice(printed.length))}\n` : `\n${unbounded(text)}\n` };
    }
    case 'tool_call':
    case 'tool_result':
    case 'tool_refused':
    case 'tool_drained':
      return { stream: 'stdout', text: `  ${summarize(event.type, payload)!}\n` };
    case 'run_finished': {
      // A stop cut a streamed block short: end its line before the outcome is printed.
      const open = streamed.text !== '';
      streamed.text = '';
      return open ? { stream: 'stdout', text: '\n' } : null;
    }
    case 'diagnostic':
    case 'run_stopping':
      return { stream: 'stderr', text: `ward: ${summarize(event.type, payload)!}\n` };
    case 'permission_decision':
      // Denials are news to the person at the terminal; allows are in `ward permissions`.
      return payload.decision === 'deny' ? { stream: 'stderr', text: `ward: ${summarize(event.type, payload)!}\n` } : null;
    default:
      return null;
  }
}
