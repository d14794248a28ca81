import { describe, expect, it } from 'vitest';

import { type ColumnSpec, fitColumns } from './fit';

const specs: ColumnSpec[] = [
  { id: 'select', width: 2, priority: 100, always: true },
  { id: 'id', width: 10, priority: 4 },
  { id: 'name', width: 'fill', min: 10, priority: 100, always: true },
  { id: 'tag', width: 8, priority: 3 },
  { id: 'created', width: 9, priority: 1 },
  { id: 'actions', width: 4, priority: 100, always: true },
];

describe('which columns a width shows', () => {
  it('keeps every column while they fit, then lets the lowest priority go first, never the name', () => {
    expect([...fitColumns(specs, 43)]).toEqual(['select', 'id', 'name', 'tag', 'created', 'actions']);
    expect([...fitColumns(specs, 42)]).toEqual(['select', 'id', 'name', 'tag', 'actions']);
    expect([...fitColumns(specs, 33)]).toEqual(['select', 'id', 'name', 'actions']);
    expect([...fitColumns(specs, 20)]).toEqual(['select', 'name', 'actions']);
    // Narrower than the columns that always stay: they stay anyway (the name then takes what is left).
    expect([...fitColumns(specs, 5)]).toEqual(['select', 'name', 'actions']);
  });
});
