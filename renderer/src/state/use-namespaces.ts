/** The namespaces this Ward offers (policy may fix them); nothing is asked of a namespace before this list says it is one. */
import { useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { NamespaceView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import type { Fail } from './use-window-error.js';

export function useNamespaces(api: WardApi, fail: Fail): readonly NamespaceView[] {
  const [namespaces, setNamespaces] = useState<readonly NamespaceView[]>([]);
  useEffect(() => {
    unwrap(api.namespaces.list({}))
      .then(setNamespaces)
      .catch(fail);
  }, [api, fail]);
  return namespaces;
}
