/** The bench's command line. */
import path from 'node:path';

export const PHASES = ['ab', 'scale', 'memory', 'cold', 'browser', 'instances'] as const;
export type Phase = (typeof PHASES)[number];
/** What runs without --only: every phase but the PostgreSQL-only one, which is asked for by name. */
const DEFAULT_PHASES: Phase[] = PHASES.filter((phase) => phase !== 'instances');
export const AB_WORKLOADS = ['list', 'listFresh', 'create', 'delete', 'list304'] as const;
export type AbWorkload = (typeof AB_WORKLOADS)[number];

export const USAGE = `usage: npm run bench -- [options]    (= tsx bench/run.ts [options])

  --quick              a smoke run: 2 rounds × 2 s, short warm-up, 1 cold start (a few minutes); proves the
                       tooling works, its figures are not to be quoted
  --rebuild            rebuild .bench-build/ (and the baseline's build) even when current
  --skip=PHASES        leave out phases: ${PHASES.join(', ')} (comma-separated)
  --only=PHASES        run only these phases; \`instances\` (PostgreSQL only: one instance against two, and the
                       shared rate-limit budget beside --baseline) runs only when named here
  --workloads=LIST     A/B workloads: list, listFresh, create, delete, list304 (default all; comma-separated)
  --seconds=S          seconds per A/B measurement (default 10; --quick 2)
  --rounds=R           A/B rounds per workload (default 5; --quick 2)
  --warmup=S           seconds of warm-up per server and workload before the rounds (default 5; --quick 1)
  --connections=N      concurrent connections (default 32)
  --floor-check        also measure the floor against a minimal node:http handler (the ceiling), list only
  --scales=LIST        plant counts for the scale phase (default 10000,100000,1000000; 10000000 is opt-in:
                       4-9 minutes of seeding and a 5.6 GB file on SQLite)
  --scale-seconds=S    seconds per scale measurement at N connections (default 5; --quick 2)
  --sequential=N       requests sent one at a time per scale measurement (default 200; --quick 50)
  --soak[=MINUTES]     memory phase: list against the app for MINUTES (default 5) and sample RSS every 10 s
  --soak-workload=W    what the soak sends: listFresh (default: the list the memory goal names, each request a
                       new query, so the query runs and the answers the app keeps fill to their bounds), list (the
                       same request again: answered from what the app kept) or create (the shared commits'
                       transactions at the app's full create rate)
  --profile            also run each workload against an app under --cpu-prof and summarise it
  --engine=E           sqlite (default) or postgresql: the app on a private PostgreSQL server (initdb,
                       test-support/postgres.ts); the floor is SQLite-only and is left out
  --database=URL       postgresql://… : the app on a fresh database on that server (dropped afterwards)
  --baseline=DIR[,DIR] also run the app as checked out in DIR (another commit; see bench/README.md) in the
                       A/B rotation, so a change is measured against its parent in the same run; several
                       (base1, base2, …) measure a series of steps in one run
  --keep               keep the temporary database folder`;

const SOAK_WORKLOADS = ['listFresh', 'list', 'create'] as const;

function soakWorkload(flag: unknown): (typeof SOAK_WORKLOADS)[number] {
  if (flag === undefined) return 'listFresh';
  const found = SOAK_WORKLOADS.find((workload) => workload === flag);
  if (!found) throw new UsageError(`--soak-workload takes ${SOAK_WORKLOADS.join(', ')}; not ${String(flag)}`);
  return found;
}

export type Options = {
  quick: boolean;
  rebuild: boolean;
  phases: Set<Phase>;
  workloads: Set<AbWorkload>;
  seconds: number;
  rounds: number;
  warmSeconds: number;
  connections: number;
  floorCheck: boolean;
  scales: number[];
  scaleSeconds: number;
  sequentialRequests: number;
  soakMinutes: number | null;
  soakWorkload: (typeof SOAK_WORKLOADS)[number];
  profile: boolean;
  profileSeconds: number;
  coldRuns: number;
  browserRuns: number;
  engine: 'sqlite' | 'postgresql';
  databaseUrl: string | null;
  baselines: string[];
  keep: boolean;
};

export class UsageError extends Error {}

export function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string | true>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new UsageError(`unknown argument: ${arg}`);
    flags.set(match[1]!, match[2] ?? true);
  }
  const known = [
    'quick', 'rebuild', 'skip', 'only', 'workloads', 'seconds', 'rounds', 'warmup', 'connections', 'floor-check', 'scales', 'scale-seconds',
    'sequential', 'soak', 'soak-workload', 'profile', 'engine', 'database', 'baseline', 'keep', 'help',
  ];
  for (const name of flags.keys()) if (!known.includes(name)) throw new UsageError(`unknown option: --${name}`);
  if (flags.has('help')) throw new UsageError('');
  const number = (name: string, fallback: number) => {
    const value = flags.get(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (value === true || !Number.isFinite(parsed) || parsed <= 0) throw new UsageError(`--${name} takes a positive number`);
    return parsed;
  };
  const phaseList = (name: string) => {
    const list = String(flags.get(name) ?? '').split(',').filter(Boolean);
    for (const phase of list) if (!(PHASES as readonly string[]).includes(phase)) throw new UsageError(`--${name} takes ${PHASES.join(', ')}; not ${phase}`);
    return list as Phase[];
  };
  const phases = new Set<Phase>(flags.has('only') ? phaseList('only') : DEFAULT_PHASES);
  for (const phase of phaseList('skip')) phases.delete(phase);
  const workloads = new Set<AbWorkload>(flags.has('workloads') ? (String(flags.get('workloads')).split(',').filter(Boolean) as AbWorkload[]) : AB_WORKLOADS);
  for (const workload of workloads) if (!(AB_WORKLOADS as readonly string[]).includes(workload)) throw new UsageError(`--workloads takes ${AB_WORKLOADS.join(', ')}; not ${workload}`);
  const quick = flags.has('quick');
  const soak = flags.get('soak');
  const scales = flags.has('scales') ? String(flags.get('scales')).split(',').map(Number) : [10_000, 100_000, 1_000_000];
  if (scales.some((n) => !Number.isInteger(n) || n < 1000)) throw new UsageError('--scales takes whole numbers of at least 1000');
  const database = typeof flags.get('database') === 'string' ? String(flags.get('database')) : null;
  if (database !== null && !/^postgres(ql)?:\/\//.test(database)) throw new UsageError('--database takes a postgresql:// URL (SQLite runs on a temporary file by default)');
  const engine = database ? 'postgresql' : String(flags.get('engine') ?? 'sqlite');
  if (engine !== 'sqlite' && engine !== 'postgresql') throw new UsageError('--engine takes sqlite or postgresql');
  return {
    quick,
    rebuild: flags.has('rebuild'),
    phases,
    workloads,
    seconds: number('seconds', quick ? 2 : 10),
    rounds: Math.round(number('rounds', quick ? 2 : 5)),
    warmSeconds: number('warmup', quick ? 1 : 5),
    connections: Math.round(number('connections', 32)),
    floorCheck: flags.has('floor-check'),
    scales: scales.sort((a, b) => a - b),
    scaleSeconds: number('scale-seconds', quick ? 2 : 5),
    sequentialRequests: Math.round(number('sequential', quick ? 50 : 200)),
    soakMinutes: soak === undefined ? null : soak === true ? 5 : number('soak', 5),
    soakWorkload: soakWorkload(flags.get('soak-workload')),
    profile: flags.has('profile'),
    profileSeconds: quick ? 3 : 8,
    coldRuns: quick ? 1 : 3,
    browserRuns: quick ? 1 : 3,
    engine,
    databaseUrl: database,
    baselines: typeof flags.get('baseline') === 'string' ? String(flags.get('baseline')).split(',').filter(Boolean).map((dir) => path.resolve(dir)) : [],
    keep: flags.has('keep'),
  };
}
