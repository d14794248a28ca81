import { z } from 'zod';
import { createSchema } from 'zod-openapi';

import { plantFieldShapes, plantSchema } from '@/shared/plants';

/**
 * What the plant procedures answer with, as their output parser. tRPC checks every answer against its
 * output schema; the plant schema's text rules (well-formed Unicode, code points, control and invisible
 * characters) held when the plant was written, so running them again on every row of every list was a
 * tenth of a list's CPU for nothing. This schema checks the shape only (types, and no other field: the declared
 * fields' shapes, shared/plants.ts), and is
 * documented as exactly what `plantSchema` documents: the OpenAPI document's `Plant` does not change.
 */
const documented = createSchema(plantSchema).components?.Plant;
if (!documented) throw new Error('plantSchema no longer registers the Plant component');

export const plantAnswer = z
  .strictObject({ id: z.bigint(), ...plantFieldShapes })
  .meta({ id: 'Plant', override: documented as Record<string, unknown> });
