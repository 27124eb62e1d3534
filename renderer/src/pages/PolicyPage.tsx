/** Every admin policy key with its value, level and source, like chrome://policy. */
import type { AuditSinkView, PolicyView } from '../../../common/views.js';
import { LockIcon } from '../components/ManagedLock.js';

export function PolicyPage({ policy }: { readonly policy: PolicyView | null }) {
  if (policy === null) return <section className="page" aria-label="Policy" tabIndex={0}>Loading…</section>;
  return (
    <section className="page" aria-label="Policy" tabIndex={0}>
      <h1>Policy</h1>
      <p>{policy.sources.length === 0 ? 'No policy: nothing on this computer is managed by an organization.' : `Managed by your organization, from ${policy.sources.join(', ')}.`}</p>
      <p className="muted">Changes to the policy take effect when Ward next starts.</p>
      {policy.audit != null && <AuditLine audit={policy.audit} />}
      {policy.errors.map((error) => (
        <div key={error} className="banner banner-error" role="alert">
          {error}
        </div>
      ))}
      {policy.warnings.map((warning) => (
        <div key={warning} className="banner banner-info" role="status">
          {warning}
        </div>
      ))}
      <table className="policy-table">
        <thead>
          <tr>
            <th scope="col">Setting</th>
            <th scope="col">Value</th>
            <th scope="col">Level</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          {policy.settings.map((setting) => (
            <tr key={setting.key} data-testid="policy-setting" className={setting.set ? 'policy-set' : 'muted'}>
              <th scope="row" title={setting.description}>
                {setting.title} <code>{setting.key}</code>
              </th>
              <td>
                <code>{setting.value ?? `not set (${setting.whenUnset})`}</code>
              </td>
              <td>
                {setting.level === 'mandatory' && (
                  <>
                    <LockIcon /> mandatory
                  </>
                )}
                {setting.level === 'recommended' && 'recommended'}
              </td>
              <td>{setting.sources.join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** "Audit: sending to siem.corp — 0 waiting": where the organization's copy of every event goes, and whether it keeps up. */
function AuditLine({ audit }: { readonly audit: AuditSinkView }) {
  const waiting = `${audit.waiting} waiting${audit.oldest === null ? '' : `, the oldest from ${new Date(audit.oldest).toLocaleString()}`}`;
  return (
    <p data-testid="audit-sink" role="status" className={audit.problem === null ? undefined : 'banner banner-error'}>
      Audit: sending to {audit.where} — {waiting}
      {audit.problem !== null && <> · not delivering: {audit.problem}</>}
    </p>
  );
}
