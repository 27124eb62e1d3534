/** Copies a text to the clipboard (write only: Ward's windows may never read it) and says so. */
import { Check, Copy } from 'lucide-react';
import { useEffect, useState } from 'react';

export function CopyButton({ text, label = 'Copy', showLabel = false }: { text: string; label?: string; showLabel?: boolean }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  useEffect(() => {
    if (copied === null) return;
    const timer = setTimeout(() => setCopied(null), 1_500);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setCopied('yes'),
      () => setCopied('failed'),
    );
  };
  const state = copied === 'yes' ? 'Copied' : copied === 'failed' ? 'Copy failed' : label;
  return (
    <button type="button" className="icon-button" aria-label={state} title={state} onClick={copy}>
      {copied === 'yes' ? <Check size={14} aria-hidden /> : <Copy size={14} aria-hidden />}
      {(showLabel || copied !== null) && <span className="icon-button-label">{state}</span>}
    </button>
  );
}
