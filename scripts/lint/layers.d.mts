export declare const MAIN_LAYERS: Readonly<Record<string, readonly string[]>>;
export declare const layersRule: unknown;
export declare const ADAPTERS: readonly string[];
