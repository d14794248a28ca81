export declare const SERVER_INPUTS: string[];
export declare const PAGE_INPUTS: string[];
export declare function staleInput(root: string, inputs: string[], builtAt: string | null | undefined): string | undefined;
