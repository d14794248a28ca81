const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const thisYear = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const otherYear = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** A date and time in full, for titles and sentences. */
export function formatFullDate(date: Date): string {
  return fullDate.format(date);
}

/** A date short enough for one line of a table cell; the full date and time in its title. */
export function When({ date, never = 'never' }: { date: Date | null; never?: string }) {
  if (!date) return <span className="muted">{never}</span>;
  const format = date.getFullYear() === new Date().getFullYear() ? thisYear : otherYear;
  return (
    <time dateTime={date.toISOString()} title={fullDate.format(date)}>
      {format.format(date)}
    </time>
  );
}
