export interface DependencyPatch {
  readonly pkg: string;
  readonly version: string;
  readonly file: string;
  readonly edits: readonly (readonly [before: string, after: string])[];
}
export declare const PATCHES: readonly DependencyPatch[];
export declare function applyPatch(root: string, patch: DependencyPatch): 'edited' | 'applied' | 'other-version';
