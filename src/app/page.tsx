export default function HomePage() {
  return (
    <main>
      <h1>Plant Store</h1>
      <p>
        The REST API lives under <a href="/api/docs">/api/docs</a>.
      </p>
    </main>
  );
}
