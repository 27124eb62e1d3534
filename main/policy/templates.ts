/**
 * What admins deploy the policy with, generated from the one schema (main/policy/schema.ts) by
 * `npm run build` (scripts/policy-templates.mjs) and checked in; a test keeps them current:
 * - policy-templates/ward-policy.schema.json: the JSON Schema of /etc/ward/policy.json and policy.d;
 * - policy-templates/windows/ward.admx and en-US/ward.adml: Group Policy templates that write
 *   HKLM/HKCU\SOFTWARE\Policies\Ward as the registry reader expects (main/policy/registry-store.ts);
 * - policy-templates/macos/dev.ward.desktop.mobileconfig: an example configuration profile;
 * - the key table in README.md's "For IT admins".
 */
import { build as buildPlist } from 'plist';
import { MAC_DOMAIN } from './policy.js';
import { POLICY_KEYS, RETIRED_KEYS, type PolicyKey } from './schema.js';
import { storageShape, valueJsonSchema } from './storage-shape.js';

const MERGE_TEXT: Record<PolicyKey['merge'], string> = {
  join: 'texts joined',
  same: 'sources must agree',
  allowList: 'only what every source allows',
  union: 'everything any source lists',
  trueWins: 'true wins',
  falseWins: 'false wins',
  min: 'the smallest wins',
  ordered: 'the strictest wins',
  capsByKind: 'per kind, only what every source allows',
  byName: 'added up by name; one name defined twice differently fails',
};

const recommendable = POLICY_KEYS.filter((key) => key.levels.includes('recommended'));

/** Keys Ward refuses where they appear (retired ones; mandatory-only ones under "recommended"): `false` in JSON Schema. */
const refusedKeys = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, false]));

export function policyJsonSchema(): string {
  const properties: Record<string, unknown> = refusedKeys(Object.keys(RETIRED_KEYS));
  for (const key of POLICY_KEYS) properties[key.key] = valueJsonSchema(key);
  const mandatoryOnly = POLICY_KEYS.filter((key) => !key.levels.includes('recommended')).map((key) => key.key);
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'Ward admin policy',
    description: 'A Ward policy file (/etc/ward/policy.json, /etc/ward/policy.d/*.json, or the file WARD_POLICY names). Keys at the top level are mandatory; keys under "recommended" are defaults the user may change. Unknown keys are allowed and ignored (Ward warns about them). Generated from main/policy/schema.ts.',
    type: 'object',
    properties: {
      $schema: { type: 'string' },
      version: { const: 1, description: 'Optional; 1 if present.' },
      ...properties,
      recommended: {
        type: 'object',
        description: 'Defaults the user may change.',
        properties: { ...refusedKeys([...Object.keys(RETIRED_KEYS), ...mandatoryOnly]), ...Object.fromEntries(recommendable.map((key) => [key.key, valueJsonSchema(key)])) },
      },
    },
    // Unknown keys are allowed, as Ward allows them (it warns and ignores them: a newer policy on an older Ward).
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

function xml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

const REG_ROOT = 'Software\\Policies\\Ward';

/** One ADMX policy per key and level (caps: one per kind); each with its ADML strings and presentation. */
interface AdmxPolicy {
  readonly id: string;
  readonly key: PolicyKey;
  readonly regKey: string;
  readonly category: string;
  readonly title: string;
  readonly explain: string;
  readonly elements: string;
  readonly presentation: string | null;
  /** Extra attributes and children (booleans carry their value on the policy). */
  readonly valueAttributes: string;
}

function admxPolicies(): AdmxPolicy[] {
  const policies: AdmxPolicy[] = [];
  const explainFor = (key: PolicyKey, level: string) => `${key.description}\n\nLevel: ${level}. Several sources: ${MERGE_TEXT[key.merge]}. When not set: ${key.whenUnset}.`;
  for (const [level, keys, regKey, category, suffix] of [
    ['mandatory', POLICY_KEYS, REG_ROOT, 'Ward', ''],
    ['recommended (a default the user may change)', recommendable, `${REG_ROOT}\\Recommended`, 'WardRecommended', '_recommended'],
  ] as const) {
    for (const key of keys) {
      const shape = storageShape(key);
      const id = `${key.key}${suffix}`;
      const base = { key, regKey, category, title: key.title, explain: explainFor(key, level) };
      switch (shape.kind) {
        case 'boolean':
          policies.push({ ...base, id, elements: '', presentation: null, valueAttributes: ` valueName="${key.key}"` });
          break;
        case 'integer':
          policies.push({
            ...base,
            id,
            elements: `<decimal id="${id}" valueName="${key.key}" minValue="${shape.min}" maxValue="${shape.max}" />`,
            presentation: `<decimalTextBox refId="${id}" defaultValue="${key.example as number}">${xml(key.title)}</decimalTextBox>`,
            valueAttributes: '',
          });
          break;
        case 'choice':
          policies.push({
            ...base,
            id,
            elements: `<enum id="${id}" valueName="${key.key}">${shape.values.map((value) => `<item displayName="$(string.${key.key}_${value})"><value><string>${xml(value)}</string></value></item>`).join('')}</enum>`,
            presentation: `<dropdownList refId="${id}" noSort="true">${xml(key.title)}</dropdownList>`,
            valueAttributes: '',
          });
          break;
        case 'text':
        case 'json':
          policies.push({
            ...base,
            id,
            elements: `<text id="${id}" valueName="${key.key}" maxLength="${shape.kind === 'json' ? 65535 : shape.maxLength}" />`,
            presentation: `<textBox refId="${id}"><label>${xml(shape.kind === 'json' ? `${key.title} (JSON)` : key.title)}</label></textBox>`,
            valueAttributes: '',
          });
          break;
        case 'list':
          policies.push({
            ...base,
            id,
            elements: `<list id="${id}" key="${regKey}\\${key.key}" valuePrefix="" />`,
            presentation: `<listBox refId="${id}">${xml(key.title)}</listBox>`,
            valueAttributes: '',
          });
          break;
        case 'listsByName':
          for (const name of shape.names) {
            policies.push({
              ...base,
              id: `${key.key}_${name}${suffix}`,
              title: `${key.title}: ${name}`,
              elements: `<list id="${key.key}_${name}${suffix}" key="${regKey}\\${key.key}\\${name}" valuePrefix="" />`,
              presentation: `<listBox refId="${key.key}_${name}${suffix}">${xml(`${key.title}: ${name}`)}</listBox>`,
              valueAttributes: '',
            });
          }
          break;
      }
    }
  }
  return policies;
}

const ADMX_NS = 'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" revision="1.0" schemaVersion="1.0" xmlns="http://schemas.microsoft.com/GroupPolicy/2006/07/PolicyDefinitions"';

export function admx(): string {
  const policies = admxPolicies().map((policy) => {
    const boolean = policy.valueAttributes !== '';
    const body = [
      `      <parentCategory ref="${policy.category}" />`,
      '      <supportedOn ref="SUPPORTED_WARD" />',
      ...(boolean ? ['      <enabledValue><decimal value="1" /></enabledValue>', '      <disabledValue><decimal value="0" /></disabledValue>'] : [`      <elements>${policy.elements}</elements>`]),
    ];
    const presentation = policy.presentation === null ? '' : ` presentation="$(presentation.${policy.id})"`;
    return [`    <policy name="${policy.id}" class="Both" displayName="$(string.${policy.id})" explainText="$(string.${policy.id}_explain)"${presentation} key="${policy.regKey}"${policy.valueAttributes}>`, ...body, '    </policy>'].join('\n');
  });
  return `<?xml version="1.0" encoding="utf-8"?>
<!-- Generated from main/policy/schema.ts by npm run build; do not edit. -->
<policyDefinitions ${ADMX_NS}>
  <policyNamespaces>
    <target prefix="ward" namespace="Ward.Policies.Ward" />
    <using prefix="windows" namespace="Microsoft.Policies.Windows" />
  </policyNamespaces>
  <resources minRequiredRevision="1.0" />
  <supportedOn>
    <definitions>
      <definition name="SUPPORTED_WARD" displayName="$(string.SUPPORTED_WARD)" />
    </definitions>
  </supportedOn>
  <categories>
    <category name="Ward" displayName="$(string.Ward)" />
    <category name="WardRecommended" displayName="$(string.WardRecommended)" />
  </categories>
  <policies>
${policies.join('\n')}
  </policies>
</policyDefinitions>
`;
}

export function adml(): string {
  const policies = admxPolicies();
  const choices = POLICY_KEYS.flatMap((key) => {
    const shape = storageShape(key);
    return shape.kind === 'choice' ? shape.values.map((value) => [`${key.key}_${value}`, value] as const) : [];
  });
  const strings = [
    ['Ward', 'Ward'],
    ['WardRecommended', 'Ward (recommended: defaults users may change)'],
    ['SUPPORTED_WARD', 'Ward 0.1 and later'],
    ...choices,
    ...policies.flatMap((policy) => [
      [policy.id, policy.title],
      [`${policy.id}_explain`, policy.explain],
    ]),
  ];
  const presentations = policies.filter((policy) => policy.presentation !== null).map((policy) => `      <presentation id="${policy.id}">${policy.presentation}</presentation>`);
  return `<?xml version="1.0" encoding="utf-8"?>
<!-- Generated from main/policy/schema.ts by npm run build; do not edit. -->
<policyDefinitionResources ${ADMX_NS}>
  <displayName>Ward</displayName>
  <description>Ward admin policy</description>
  <resources>
    <stringTable>
${strings.map(([id, text]) => `      <string id="${id}">${xml(text!)}</string>`).join('\n')}
    </stringTable>
    <presentationTable>
${presentations.join('\n')}
    </presentationTable>
  </resources>
</policyDefinitionResources>
`;
}

/** An example profile: every key with its example value (edit before deploying). Fixed UUIDs keep the file stable. */
export function mobileconfig(): string {
  const settings: Record<string, unknown> = Object.fromEntries(POLICY_KEYS.filter((key) => !key.levels.includes('recommended')).map((key) => [key.key, key.example]));
  settings.recommended = Object.fromEntries(recommendable.map((key) => [key.key, key.example]));
  const profile = {
    PayloadContent: [
      {
        PayloadType: MAC_DOMAIN,
        PayloadVersion: 1,
        PayloadIdentifier: `${MAC_DOMAIN}.policy.settings`,
        PayloadUUID: '6F1D2B8E-3C4A-4E5B-9A7C-1D2E3F4A5B6C',
        PayloadDisplayName: 'Ward policy',
        ...settings,
      },
    ],
    PayloadDisplayName: 'Ward policy (example: edit before deploying)',
    PayloadDescription: 'Managed preferences for Ward (dev.ward.desktop). Keys at the top level are mandatory; keys under "recommended" are defaults users may change. Generated from main/policy/schema.ts.',
    PayloadIdentifier: `${MAC_DOMAIN}.policy`,
    PayloadScope: 'System',
    PayloadType: 'Configuration',
    PayloadUUID: '0C9B8A7D-6E5F-4A3B-8C2D-1E0F9A8B7C6D',
    PayloadVersion: 1,
  };
  return buildPlist(profile as Parameters<typeof buildPlist>[0]);
}

export function readmeKeyTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const typeOf = (key: PolicyKey) => {
    const shape = storageShape(key);
    return shape.kind === 'choice' ? shape.values.map((value) => `\`${value}\``).join(' \\| ') : shape.kind === 'integer' ? `integer ${shape.min}–${shape.max}` : shape.kind === 'listsByName' ? 'list per kind' : shape.kind;
  };
  const rows = POLICY_KEYS.map((key) => `| \`${key.key}\` | ${typeOf(key)} | ${key.levels.join(', ')} | ${MERGE_TEXT[key.merge]} | ${cell(key.whenUnset)} | ${cell(key.description)} |`);
  return ['| key | type | levels | several sources | when not set | meaning |', '| --- | --- | --- | --- | --- | --- |', ...rows].join('\n');
}

export const README_MARKERS = { start: '<!-- policy-keys:start (generated by npm run build) -->', end: '<!-- policy-keys:end -->' } as const;

/** The README with its key table replaced by the current one. */
export function withKeyTable(readme: string): string {
  const start = readme.indexOf(README_MARKERS.start);
  const end = readme.indexOf(README_MARKERS.end);
  if (start < 0 || end < start) throw new Error(`README.md has no ${README_MARKERS.start} … ${README_MARKERS.end} block`);
  return `${readme.slice(0, start + README_MARKERS.start.length)}\n${readmeKeyTable()}\n${readme.slice(end)}`;
}

/** Every generated file, by path from the repository root. */
export function policyTemplates(): Record<string, string> {
  return {
    'policy-templates/ward-policy.schema.json': policyJsonSchema(),
    'policy-templates/windows/ward.admx': admx(),
    'policy-templates/windows/en-US/ward.adml': adml(),
    [`policy-templates/macos/${MAC_DOMAIN}.mobileconfig`]: mobileconfig(),
  };
}
