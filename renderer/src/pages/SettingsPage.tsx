/** Model provider, model key (written to the keychain, never shown back) and the data folder. */
import { useEffect, useState } from 'react';
import { PlugZap } from 'lucide-react';
import type { WardApi } from '../../../preload/contract.js';
import type { PolicyView, ProviderTestView, SettingsView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import { useFormError } from '../components/FieldError.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { listed, ManagedLock, policySetting } from '../components/ManagedLock.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';

const STORE_NAME: Record<SettingsView['keyStore'], string> = {
  keychain: 'the system keychain',
  dpapi: 'Windows data protection',
  file: "Ward's file store",
};

export function SettingsPage({ api, namespace, policy }: { api: WardApi; namespace: string; policy: PolicyView | null }) {
  const [settings, setSettings] = useState<SettingsView | null>(null);
  const [baseUrl, setBaseUrl] = useState('');
  const [model, setModel] = useState('');
  const [notice, say] = usePageNotice();
  const [confirmRemoveKey, setConfirmRemoveKey] = useState(false);

  const show = (view: SettingsView) => {
    setSettings(view);
    setBaseUrl(view.modelProvider.baseUrl);
    setModel(view.modelProvider.model);
  };
  useEffect(() => {
    unwrap(api.settings.get({ namespace }))
      .then(show)
      .catch(say.fail);
  }, [api, namespace]);

  /** A failure goes to `onError` (the form's field) when given, else to the page's notice. */
  const run = async (action: () => Promise<SettingsView>, done: string, onError?: (text: string) => void) => {
    try {
      show(await action());
      say.info(done);
    } catch (failure) {
      if (onError === undefined) say.fail(failure);
      else onError(errorText(failure));
    }
  };

  return (
    <section className="page" aria-label="Settings">
      <h1>Settings</h1>
      <p className="muted">
        The model provider and key below are this namespace's (<strong>{namespace}</strong>): other namespaces keep their own.
      </p>
      <p>
        Data folder: <code>{settings?.dataFolder ?? '…'}</code>
      </p>
      <div className="settings-columns">
      <ProviderForm
        api={api}
        namespace={namespace}
        policy={policy}
        baseUrl={baseUrl}
        model={model}
        onBaseUrl={setBaseUrl}
        onModel={setModel}
        onSave={(onError) => void run(() => unwrap(api.settings.setModelProvider({ namespace, baseUrl, model })), 'Model provider saved', onError)}
        onFail={say.fail}
      />
      <ModelKeyForm
        settings={settings}
        policy={policy}
        onStore={(key, onError) => void run(() => unwrap(api.settings.setKey({ namespace, key })), 'Key stored', onError)}
        onRemove={() => setConfirmRemoveKey(true)}
      />
      </div>
      <PageNotice notice={notice} />
      <ConfirmDialog
        open={confirmRemoveKey}
        title="Remove the model key?"
        description={`Chats in namespace ${namespace} cannot reach the model until a key is stored again. The key is deleted from ${settings === null ? 'its store' : STORE_NAME[settings.keyStore]}; Ward cannot show it back.`}
        confirmLabel="Remove key"
        onCancel={() => setConfirmRemoveKey(false)}
        onConfirm={() => {
          setConfirmRemoveKey(false);
          void run(() => unwrap(api.settings.clearKey({ namespace })), 'Key removed');
        }}
      />
    </section>
  );
}

interface ProviderFormProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly policy: PolicyView | null;
  readonly baseUrl: string;
  readonly model: string;
  readonly onBaseUrl: (baseUrl: string) => void;
  readonly onModel: (model: string) => void;
  readonly onSave: (onError: (text: string) => void) => void;
  readonly onFail: (failure: unknown) => void;
}

/** The endpoint and model being edited, with Save and a Test connection that says what the provider answered. */
function ProviderForm({ api, namespace, policy, baseUrl, model, onBaseUrl, onModel, onSave, onFail }: ProviderFormProps) {
  const [test, setTest] = useState<ProviderTestView | 'testing' | null>(null);
  // The policy's and main's refusals of a model name it; anything else is about the endpoint.
  const error = useFormError((text) => (/\bmodels?\b/.test(text) && !/https?:|endpoint|provider/.test(text) ? 'model' : 'endpoint'));
  const testProvider = () => {
    setTest('testing');
    unwrap(api.settings.testProvider({ namespace }))
      .then(setTest)
      .catch((failure: unknown) => {
        setTest(null);
        onFail(failure);
      });
  };
  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        error.clear();
        onSave(error.set);
      }}
    >
      <h2>Model provider</h2>
      <label>
        Endpoint
        <input value={baseUrl} onChange={(event) => onBaseUrl(event.target.value)} {...error.props('endpoint')} />
        {error.message('endpoint')}
      </label>
      <ManagedLock setting={policySetting(policy, 'providers')} what={`providers limited to ${listed(policySetting(policy, 'providers'))}`} />
      <label>
        Model
        <input value={model} onChange={(event) => onModel(event.target.value)} {...error.props('model')} />
        {error.message('model')}
      </label>
      <ManagedLock setting={policySetting(policy, 'models')} what={`models limited to ${listed(policySetting(policy, 'models'))}`} />
      <div className="row">
        <button type="submit">Save provider</button>
        <button type="button" onClick={testProvider} disabled={test === 'testing'}>
          <PlugZap size={14} aria-hidden /> {test === 'testing' ? 'Testing…' : 'Test connection'}
        </button>
      </div>
      {test !== null && test !== 'testing' && (
        <p className={test.ok ? 'test-ok' : 'test-failed'} role={test.ok ? 'status' : 'alert'} data-testid="provider-test">
          {test.ok ? 'Connected: ' : 'Failed: '}
          {test.message}
        </p>
      )}
    </form>
  );
}

/** A new model key, written to the key store and never shown back; Remove asks first (the page's dialog). */
function ModelKeyForm({ settings, policy, onStore, onRemove }: { settings: SettingsView | null; policy: PolicyView | null; onStore: (key: string, onError: (text: string) => void) => void; onRemove: () => void }) {
  const [key, setKey] = useState('');
  const error = useFormError(() => 'key');
  return (
    <form
      className="form"
      onSubmit={(event) => {
        event.preventDefault();
        const value = key;
        setKey('');
        error.clear();
        onStore(value, error.set);
      }}
    >
      <h2>Model key</h2>
      <p data-testid="key-state">{settings === null ? '…' : settings.keySet ? `A key is stored in ${STORE_NAME[settings.keyStore]}.` : 'No key is stored.'}</p>
      <ManagedLock setting={policySetting(policy, 'credentialStore')} what={settings === null ? undefined : `keys are kept in ${STORE_NAME[settings.keyStore]}`} />
      <label>
        New key
        <input type="password" autoComplete="off" value={key} onChange={(event) => setKey(event.target.value)} {...error.props('key')} />
        {error.message('key')}
      </label>
      <div className="row">
        <button type="submit" disabled={key.length === 0}>
          Store key
        </button>
        <button type="button" className="danger" disabled={!settings?.keySet} onClick={onRemove}>
          Remove key
        </button>
      </div>
    </form>
  );
}
