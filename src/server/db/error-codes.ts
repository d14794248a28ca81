/** True when the error is the database refusing a second row with the same unique key. */
export function isUniqueViolation(error: unknown): boolean {
  return prismaCode(error) === 'P2002';
}

/** True when the database refuses a row whose reference (foreign key) points at no row. */
export function isForeignKeyViolation(error: unknown): boolean {
  return prismaCode(error) === 'P2003';
}

/** True when the row an update or delete names does not exist. */
export function isRecordMissing(error: unknown): boolean {
  return prismaCode(error) === 'P2025';
}

function prismaCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}
