/** @hey-api/openapi-ts's SDK, set up as docs/api.md shows, through the round trip. */
import { client as heyApiClient } from './plant-store-hey-api/client.gen';
import { createPlant, deletePlant, listPlants, updatePlant } from './plant-store-hey-api/sdk.gen';
import type { CreatePlantErrors, Plant } from './plant-store-hey-api/types.gen';
import { nextPage } from './plant-store-json';
import { type Answer, type Exactly, type RoundTripClient, roundTrip } from './round-trip';

// An int64 is a bigint, converted by schema: exact and of one type.
const idType: Exactly<Plant['id'], bigint> = true;
// A 400 of create is the API's {error, message}, its `error` one of the values create can answer.
const errorType: Exactly<CreatePlantErrors[400]['message'], string> = true;

export async function run(token: string): Promise<void> {
  void idType;
  void errorType;
  heyApiClient.setConfig({ auth: token });
  const answer = (result: { data?: Plant; error?: { error: number; message: string }; response?: Response }): Answer =>
    result.data ? { plant: result.data } : { status: result.response?.status ?? 0, error: result.error! };
  const client: RoundTripClient = {
    create: async (plant) => answer(await createPlant({ body: plant })),
    list: async (query) => {
      const { data, error, response } = await listPlants({ query });
      if (!data) throw new Error(`list: ${response?.status} ${error?.message}`);
      return { plants: data, next: nextPage(response?.headers.get('link')) };
    },
    patch: async (id, patch) => answer(await updatePlant({ path: { id }, body: patch })),
    remove: async (id) => {
      const { error, response } = await deletePlant({ path: { id } });
      return error ? { status: response?.status ?? 0, error } : { deleted: true };
    },
  };
  await roundTrip(client);
}
