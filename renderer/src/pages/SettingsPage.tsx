/** Model provider, model key (written to the keychain, never shown back) and the data folder. */
import { useEffect, useState } from 'react';
import type { PolicyView, SettingsView, WardApi } from '../../../preload/contract.js';
import { unwrap } from '../api.js';
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
  const [key, setKey] = useState('');
  const [notice, say] = usePageNotice();

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

  const run = async (action: () => Promise<SettingsView>, done: string) => {
    try {
      show(await action());
      say.info(done);
    } catch (failure) {
      say.fail(failure);
    }
  };

  return (
    <section className="page" aria-label="Settings">
      <h2>Settings</h2>
      <p>
        Data folder: <code>{settings?.dataFolder ?? '…'}</code>
      </p>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          void run(() => unwrap(api.settings.setModelProvider({ namespace, baseUrl, model })), 'Model provider saved');
        }}
      >
        <h3>Model provider</h3>
        <label>
          Endpoint
          <input value={baseUrl} onChange={(event) => setBaseUrl(event.target.value)} />
        </label>
        <ManagedLock setting={policySetting(policy, 'providers')} what={`providers limited to ${listed(policySetting(policy, 'providers'))}`} />
        <label>
          Model
          <input value={model} onChange={(event) => setModel(event.target.value)} />
        </label>
        <ManagedLock setting={policySetting(policy, 'models')} what={`models limited to ${listed(policySetting(policy, 'models'))}`} />
        <button type="submit">Save provider</button>
      </form>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          const value = key;
          setKey('');
          void run(() => unwrap(api.settings.setKey({ namespace, key: value })), 'Key stored');
        }}
      >
        <h3>Model key</h3>
        <p data-testid="key-state">{settings === null ? '…' : settings.keySet ? `A key is stored in ${STORE_NAME[settings.keyStore]}.` : 'No key is stored.'}</p>
        <ManagedLock setting={policySetting(policy, 'credentialStore')} what={settings === null ? undefined : `keys are kept in ${STORE_NAME[settings.keyStore]}`} />
        <label>
          New key
          <input type="password" autoComplete="off" value={key} onChange={(event) => setKey(event.target.value)} />
        </label>
        <div className="row">
          <button type="submit" disabled={key.length === 0}>
            Store key
          </button>
          <button type="button" disabled={!settings?.keySet} onClick={() => void run(() => unwrap(api.settings.clearKey({ namespace })), 'Key removed')}>
            Remove key
          </button>
        </div>
      </form>
      <PageNotice notice={notice} />
    </section>
  );
}
