export interface CheckResult {
  readonly ok: boolean;
  readonly what: string;
  readonly skipped?: boolean;
}
export interface AppLocation {
  readonly kind: 'mac' | 'win' | 'linux';
  readonly fuseTarget: string;
  readonly resources: string;
}
export declare const EXPECTED_FUSES: Readonly<Record<string, boolean>>;
export declare function locateApp(appDir: string): AppLocation;
export declare function checkFuses(fuseTarget: string): Promise<CheckResult[]>;
export declare function checkAsar(resources: string, kind: AppLocation['kind']): CheckResult[];
export declare function checkCliPin(resources: string, pinFile?: string): CheckResult[];
export declare function checkSignatures(appDir: string, location: AppLocation, platform?: NodeJS.Platform): CheckResult[];
export declare function verifyPackage(appDir: string): Promise<CheckResult[]>;
