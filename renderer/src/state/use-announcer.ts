/** The window's one status region: what finished, which chat waits for an approval. */
import { useCallback, useState } from 'react';

export type Announce = (text: string) => void;

export function useAnnouncer(): readonly [string, Announce] {
  const [announcement, setAnnouncement] = useState('');
  // The same words twice in a row still get said: a no-break space makes them a change.
  const announce = useCallback<Announce>((text) => setAnnouncement((current) => (current === text ? `${text}\u00a0` : text)), []);
  return [announcement, announce];
}
