/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // Test runs build into their own folder, so they never replace the build a running server uses.
  distDir: process.env.NEXT_DIST_DIR ?? '.next',
  // `npm run typecheck` (part of `npm test`) checks types over the whole repo, tests included; a build
  // repeating it would only slow the first `npm start` on a fresh machine.
  typescript: { ignoreBuildErrors: true },
  // Native and file-reading packages load from node_modules at run time instead of being bundled.
  serverExternalPackages: ['better-sqlite3', '@prisma/adapter-better-sqlite3', 'swagger-ui-dist', 'pino'],
  // The page headers come from src/proxy.ts, which the built assets bypass.
  async headers() {
    return [{ source: '/_next/static/:path*', headers: [{ key: 'X-Content-Type-Options', value: 'nosniff' }] }];
  },
};

export default nextConfig;
