/**
 * First run: where the model is (Anthropic, or a company gateway), its key (stored in main's key
 * store, never shown back), Test connection, and a first folder to start a chat in. The Chats
 * page shows it while the namespace has no key; every no-key error opens it.
 */
import { FolderOpen, PlugZap } from 'lucide-react';
import { useCallback, useEffect, useId, useState, type ReactNode } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ProviderTestView, SettingsView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { errorText, unwrap } from '../api.js';
import type { Go, Place } from '../state/use-place.js';
import { useModelSetup, useSetupRequests } from '../state/use-model-setup.js';
import { FieldError, invalidProps, type FieldErrors } from './FieldError.js';

export const ANTHROPIC_URL = 'https://api.anthropic.com';
const MIN_KEY_LENGTH = 8;

type Field = 'gateway' | 'key';

export interface SetupCardProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly settings: SettingsView | null;
  readonly onSaved: () => void;
  readonly onStartChat: (folder: string | null) => void;
}

/** What is wrong with a key before it is sent (main checks again); never echoes it. */
function keyProblem(key: string): string | undefined {
  if (/\s/.test(key)) return 'A key is one word: no spaces or line breaks.';
  if (key.length < MIN_KEY_LENGTH) return `A key is at least ${MIN_KEY_LENGTH} characters.`;
  return undefined;
}

/** The card while the namespace has no key or the person asked for it; the folder its chat starts in. */
export function useSetupCard(api: WardApi, scope: { readonly ready: boolean; readonly namespace: string }, place: Place, go: Go, newChat: () => void) {
  const setup = useModelSetup(api, scope, place.page);
  const [asked, setAsked] = useState(false);
  const [firstFolder, setFirstFolder] = useState<string | null>(null);
  // The first folder is for the chat the card starts, not every later one.
  useEffect(() => {
    if (place.conversationId !== 'new') setFirstFolder(null);
    if (place.conversationId !== null) setAsked(false);
  }, [place.conversationId]);
  // Once shown, the card stays while the person finishes it (storing the key ends "needed").
  useEffect(() => {
    if (setup.needed) setAsked(true);
  }, [setup.needed]);
  useSetupRequests(
    useCallback(() => {
      setAsked(true);
      go({ page: 'chats', conversationId: null });
    }, [go]),
  );
  const startChat = (folder: string | null) => {
    setAsked(false);
    setFirstFolder(folder);
    newChat();
  };
  const setupCard: ReactNode | null =
    setup.needed || asked ? <SetupCard api={api} namespace={place.namespace} settings={setup.settings} onSaved={setup.refresh} onStartChat={startChat} /> : null;
  return { setupCard, firstFolder };
}

export function SetupCard({ api, namespace, settings, onSaved, onStartChat }: SetupCardProps) {
  const ids = useId();
  return (
    <section className="setup-card" aria-labelledby={`${ids}title`}>
      <h1 id={`${ids}title`}>Set up Ward</h1>
      <p className="muted">Tell Ward where the model is and give it a key; then choose a folder to work in. The key stays in this computer's key store and is never shown again.</p>
      <ModelForm api={api} namespace={namespace} settings={settings} onSaved={onSaved} />
      <FirstFolder api={api} onStartChat={onStartChat} />
    </section>
  );
}

/** Checks the fields before anything is sent (main checks again); a key is never echoed. */
function fieldProblems(where: 'anthropic' | 'gateway', baseUrl: string, key: string, settings: SettingsView | null): FieldErrors<Field> | null {
  const found: FieldErrors<Field> = {};
  if (where === 'gateway' && baseUrl === '') found.gateway = "Enter the gateway's address, such as https://llm.example.com.";
  if (key !== '') found.key = keyProblem(key);
  else if (settings?.keySet !== true && settings?.environmentKey !== true) found.key = 'Enter the model key.';
  return Object.values(found).some((error) => error !== undefined) ? found : null;
}

function ModelForm({ api, namespace, settings, onSaved }: Omit<SetupCardProps, 'onStartChat'>) {
  const ids = useId();
  const current = settings?.modelProvider.baseUrl ?? ANTHROPIC_URL;
  const [where, setWhere] = useState<'anthropic' | 'gateway'>(current === ANTHROPIC_URL ? 'anthropic' : 'gateway');
  const [gateway, setGateway] = useState(current === ANTHROPIC_URL ? '' : current);
  const [key, setKey] = useState('');
  const [errors, setErrors] = useState<FieldErrors<Field>>({});
  const [test, setTest] = useState<ProviderTestView | 'testing' | null>(null);

  /** Saves what changed; false (with the field's error shown) when something was refused. */
  const save = async (): Promise<boolean> => {
    const baseUrl = where === 'anthropic' ? ANTHROPIC_URL : gateway.trim();
    const found = fieldProblems(where, baseUrl, key, settings);
    setErrors(found ?? {});
    if (found !== null) return false;
    try {
      if (baseUrl !== current) await unwrap(api.settings.setModelProvider({ namespace, baseUrl, model: settings?.modelProvider.model ?? '' }));
    } catch (failure) {
      setErrors({ gateway: errorText(failure) });
      return false;
    }
    const value = key;
    setKey('');
    try {
      if (value !== '') await unwrap(api.settings.setKey({ namespace, key: value }));
    } catch (failure) {
      setErrors({ key: errorText(failure) });
      return false;
    }
    onSaved();
    return true;
  };
  const testConnection = async () => {
    if (!(await save())) return;
    setTest('testing');
    unwrap(api.settings.testProvider({ namespace }))
      .then(setTest)
      .catch((failure: unknown) => setTest({ ok: false, status: 0, durationMs: 0, message: errorText(failure) }));
  };
  return (
    <form
      aria-label="Set up the model"
      className="form"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setTest(null);
        void save();
      }}
    >
      <WhereField where={where} gateway={gateway} error={errors.gateway} onWhere={setWhere} onGateway={setGateway} />
      <label>
        2. Model key
        <input type="password" autoComplete="off" value={key} onChange={(event) => setKey(event.target.value)} {...invalidProps(`${ids}key`, errors.key)} />
        <FieldError id={`${ids}key`} error={errors.key} />
      </label>
      <p className="muted" data-testid="setup-key-state">
        {settings?.keySet === true ? 'A key is stored; a new one replaces it.' : settings?.environmentKey === true ? "Runs use the key in Ward's environment until you store one." : 'No key is stored yet.'}
      </p>
      <div className="row">
        <button type="submit">Save</button>
        <button type="button" onClick={() => void testConnection()} disabled={test === 'testing'}>
          <PlugZap size={14} aria-hidden /> {test === 'testing' ? 'Testing…' : 'Test connection'}
        </button>
      </div>
      {test !== null && test !== 'testing' && (
        <p className={test.ok ? 'test-ok' : 'test-failed'} role={test.ok ? 'status' : 'alert'} data-testid="setup-test">
          {test.ok ? 'Connected: ' : 'Failed: '}
          {test.message}
        </p>
      )}
    </form>
  );
}

/** Step 3: the folder the first chat works in (the system's folder dialog), or Ward's own. */
function FirstFolder({ api, onStartChat }: Pick<SetupCardProps, 'api' | 'onStartChat'>) {
  const ids = useId();
  const [folder, setFolder] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  const pick = async () => {
    setProblem(undefined);
    try {
      const { path } = await unwrap(api.folders.pick({}));
      if (path !== null) setFolder(path);
    } catch (failure) {
      setProblem(errorText(failure));
    }
  };
  return (
    <div className="field">
      <span id={`${ids}label`}>3. A first folder</span>
      <div className="row">
        <button type="button" onClick={() => void pick()} aria-describedby={problem === undefined ? `${ids}label` : `${ids}label ${ids}problem`}>
          <FolderOpen size={14} aria-hidden /> {folder === null ? 'Choose a folder…' : 'Choose another folder…'}
        </button>
        <button type="button" className="primary" onClick={() => onStartChat(folder)}>
          {folder === null ? "Start a chat in Ward's own folder" : 'Start a chat in this folder'}
        </button>
      </div>
      {folder !== null && <code className="chosen-folder">{escapeLineForWindow(folder, 300)}</code>}
      <FieldError id={`${ids}problem`} error={problem} />
    </div>
  );
}

interface WhereProps {
  readonly where: 'anthropic' | 'gateway';
  readonly gateway: string;
  readonly error: string | undefined;
  readonly onWhere: (where: 'anthropic' | 'gateway') => void;
  readonly onGateway: (url: string) => void;
}

/** Step 1: Anthropic itself, or a company gateway at a URL. */
function WhereField({ where, gateway, error, onWhere, onGateway }: WhereProps) {
  const id = useId();
  return (
    <fieldset className="choice-group">
      <legend>1. Where the model is</legend>
      <label className="choice">
        <input type="radio" name="model-where" checked={where === 'anthropic'} onChange={() => onWhere('anthropic')} /> Anthropic (api.anthropic.com)
      </label>
      <label className="choice">
        <input type="radio" name="model-where" checked={where === 'gateway'} onChange={() => onWhere('gateway')} /> A company gateway
      </label>
      {where === 'gateway' && (
        <label>
          Gateway URL
          <input type="url" value={gateway} placeholder="https://llm.example.com" onChange={(event) => onGateway(event.target.value)} {...invalidProps(id, error)} />
          <FieldError id={id} error={error} />
        </label>
      )}
    </fieldset>
  );
}
