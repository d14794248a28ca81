import { PHASE_PRODUCTION_BUILD } from 'next/constants.js';

/**
 * The admin page is a static export: `next build` writes plain HTML, JS and CSS, and the one node:http server
 * (src/server/main.ts) serves them beside the API with its own security headers. No Next.js server runs in
 * production. `npm run dev` serves the pages through Next.js's development server inside the same process.
 */
export default function nextConfig(phase) {
  return {
    output: 'export',
    // The export lands inside the build folder the server runs from (BUILD_DIR, default dist/); the build's
    // own cache stays in .next.
    ...(phase === PHASE_PRODUCTION_BUILD ? { distDir: `${process.env.BUILD_DIR ?? 'dist'}/pages` } : {}),
    reactStrictMode: true,
    poweredByHeader: false,
    // `npm run typecheck` (part of `npm test`) checks types over the whole repo, tests included; a build
    // repeating it would only slow the first `npm start` on a fresh machine.
    typescript: { ignoreBuildErrors: true },
  };
}
