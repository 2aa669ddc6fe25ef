export declare const TEMPORAL_CLI_MODULE: string;
export declare const projectRoot: string;
export declare const dataDir: string;
export declare function findTemporalBinary(): string | undefined;
export declare function ensureTemporalBinary(): Promise<string>;
export declare function freePort(): Promise<number>;
export interface DevServerOptions {
  dbFile?: string;
  port?: number;
  uiPort?: number;
  headless?: boolean;
  namespace?: string;
  searchAttributes?: Record<string, string>;
  logLevel?: string;
  quiet?: boolean;
  /** Overrides of `devServerSettings` (e.g. the server's own default, for a comparison). */
  dynamicConfig?: Record<string, unknown>;
  /** SQLite pragmas instead of `devServerPragmas`. */
  sqlitePragmas?: string[];
}
export interface DevServer {
  binary: string;
  address: string;
  namespace: string;
  dbFile: string;
  pid: number;
  uiAddress?: string;
  stop(): Promise<void>;
  exited: Promise<{ code: number | null; signal: string | null }>;
}
/** The dynamic config every dev server of ours starts with. */
export declare const devServerSettings: Readonly<Record<string, unknown>>;
/** The SQLite pragmas every dev server of ours starts with (WAL, no fsync per commit). */
export declare const devServerPragmas: readonly string[];
export declare function startDevServer(options?: DevServerOptions): Promise<DevServer>;
