/**
 * A server's request for input during a tool call (MCP elicitation), shown with the approvals:
 * its form with the defaults filled in, or the page it asks to open, and Accept / Decline /
 * Cancel. The answer goes to the server that asked, never to the model; main checks a form
 * before sending it (an error names the field, and the form stays open) and opens an accepted
 * page itself. When time runs out the request is declined.
 */
import { useState } from 'react';
import type { ElicitationAction, ElicitationFieldValue, ElicitationFieldView, PendingElicitationView } from '../../../common/views.js';
import { errorText } from '../api.js';
import { OriginLink, useSecondsLeft, type ApprovalOrigin } from './ApprovalPrompt.js';

type Values = Record<string, ElicitationFieldValue | undefined>;

function initialValues(fields: readonly ElicitationFieldView[]): Values {
  return Object.fromEntries(fields.map((field) => [field.name, field.default ?? (field.kind === 'boolean' ? false : field.kind === 'multi' ? [] : undefined)]));
}

const INPUT_TYPE: Record<NonNullable<ElicitationFieldView['format']>, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function FieldInput({ field, value, onChange }: { field: ElicitationFieldView; value: ElicitationFieldValue | undefined; onChange: (value: ElicitationFieldValue | undefined) => void }) {
  const id = `elicit-${field.name}`;
  const label = (
    <>
      {field.title}
      {field.required ? ' (required)' : ''}
      {field.description !== '' && <span className="muted"> {field.description}</span>}
    </>
  );
  if (field.kind === 'boolean') {
    return (
      <label htmlFor={id}>
        <input id={id} type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} /> {label}
      </label>
    );
  }
  if (field.kind === 'enum') {
    return (
      <label htmlFor={id}>
        {label}
        <select id={id} value={typeof value === 'string' ? value : ''} onChange={(event) => onChange(event.target.value === '' ? undefined : event.target.value)}>
          <option value="">—</option>
          {field.options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
    );
  }
  if (field.kind === 'multi') {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <fieldset>
        <legend>{label}</legend>
        {field.options.map((option) => (
          <label key={option.value}>
            <input
              type="checkbox"
              checked={chosen.includes(option.value)}
              onChange={(event) => onChange(event.target.checked ? [...chosen, option.value] : chosen.filter((item) => item !== option.value))}
            />{' '}
            {option.label}
          </label>
        ))}
      </fieldset>
    );
  }
  const numeric = field.kind === 'number' || field.kind === 'integer';
  const type = field.sensitive ? 'password' : numeric ? 'number' : field.format === null ? 'text' : INPUT_TYPE[field.format];
  return (
    <label htmlFor={id}>
      {label}
      <input
        id={id}
        type={type}
        autoComplete="off"
        step={field.kind === 'integer' ? 1 : 'any'}
        value={value === undefined ? '' : String(value)}
        onChange={(event) => {
          const text = event.target.value;
          onChange(text === '' ? undefined : numeric ? Number(text) : text);
        }}
      />
    </label>
  );
}

export function ElicitationPrompt({
  elicitation,
  onAnswer,
  now: fixedNow,
  origin,
}: {
  elicitation: PendingElicitationView;
  onAnswer: (action: ElicitationAction, content?: Record<string, ElicitationFieldValue>) => Promise<unknown>;
  now?: number;
  origin?: ApprovalOrigin;
}) {
  const [values, setValues] = useState<Values>(() => initialValues(elicitation.fields));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const left = useSecondsLeft(elicitation.expiresAt, fixedNow);
  const answer = (action: ElicitationAction) => {
    setBusy(true);
    setProblem(null);
    const content = Object.fromEntries(Object.entries(values).filter((entry): entry is [string, ElicitationFieldValue] => entry[1] !== undefined));
    onAnswer(action, action === 'accept' && elicitation.mode === 'form' ? content : undefined)
      .catch((failure: unknown) => setProblem(errorText(failure)))
      .finally(() => setBusy(false));
  };
  const disabled = busy || left === 0;
  return (
    <section className="approval" role="alertdialog" aria-labelledby={`elicitation-${elicitation.id}`} data-testid="elicitation">
      <h2 id={`elicitation-${elicitation.id}`}>
        The server {elicitation.server} {elicitation.mode === 'url' ? 'asks you to open a page' : 'asks for input'} (agent {elicitation.agent})
      </h2>
      <div className="approval-summary">{elicitation.message}</div>
      {elicitation.mode === 'url' ? (
        <div className="approval-summary">
          <code>{elicitation.url}</code>
        </div>
      ) : (
        <form
          className="form"
          onSubmit={(event) => {
            event.preventDefault();
            answer('accept');
          }}
        >
          {elicitation.fields.map((field) => (
            <FieldInput key={field.name} field={field} value={values[field.name]} onChange={(value) => setValues((current) => ({ ...current, [field.name]: value }))} />
          ))}
        </form>
      )}
      <div className="muted">The answer goes to the server only, never to the model.</div>
      <OriginLink origin={origin} />
      {problem !== null && (
        <div className="banner banner-error" role="alert">
          {problem}
        </div>
      )}
      <div className="approval-time" aria-live="polite">
        {left > 0 ? `${left} s left — no answer declines` : 'Timed out: declined'}
      </div>
      <div className="approval-actions">
        <button type="button" className="primary" disabled={disabled} onClick={() => answer('accept')}>
          {elicitation.mode === 'url' ? 'Open in browser' : 'Accept'}
        </button>
        <button type="button" disabled={disabled} onClick={() => answer('decline')}>
          Decline
        </button>
        <button type="button" disabled={disabled} onClick={() => answer('cancel')}>
          Cancel
        </button>
      </div>
    </section>
  );
}
