// Seeds N plants (default 100,000) owned by user 1 straight into a SQLite file of the app, for the timings
// in docs/admin-page.md ("At scale"). Not a test. Usage, with a server started on that file (its first admin is user 1):
//   node e2e/browser/scale/seed.mjs /tmp/big.db 100000
import Database from 'better-sqlite3';
const db = new Database(process.argv[2]);
const n = Number(process.argv[3] ?? 100000);
const words = ['Monstera', 'Ficus', 'Fern', 'Palm', 'Aloe', 'Cactus', 'Orchid', 'Begonia', 'Calathea', 'Pothos', 'Straße', 'Ivy'];
const tags = ['tropical', 'succulent', 'shade', 'sun', 'indoor', 'outdoor', 'rare', 'herb'];
const fold = (v) => v.normalize('NFKC').toUpperCase().toLowerCase().replace(/ς/g, 'σ').replace(/ß/g, 'ss');
const insert = db.prepare('INSERT INTO "Plant" (id, name, "nameFolded", tag, "ownerId", "createdAt") VALUES (?, ?, ?, ?, 1, ?)');
const now = new Date().toISOString().replace('Z', '+00:00');
db.transaction(() => {
  for (let i = 1; i <= n; i++) {
    const name = `${words[i % words.length]} ${words[(i * 7) % words.length].toLowerCase()} no. ${i}`;
    insert.run(BigInt(1_000_000 + i), name, fold(name), i % 5 === 0 ? null : tags[i % tags.length], now);
  }
})();
console.log(db.prepare('SELECT COUNT(*) c FROM "Plant"').get());
