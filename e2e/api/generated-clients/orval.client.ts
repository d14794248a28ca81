/** orval's functions and the mutator, set up as docs/api.md shows, through the round trip. */
import { createPlant, deletePlant, listPlants, type Plant, updatePlant } from './plant-store-orval';
import { PlantStoreError, plantStoreConnection } from './plant-store-orval-fetch';
import { nextPage } from './plant-store-json';
import { type Answer, type Exactly, type RoundTripClient, roundTrip } from './round-trip';

// An int64 is `number | bigint`, never a plain number that could have been rounded.
const idType: Exactly<Plant['id'], number | bigint> = true;
// A failure is a PlantStoreError carrying the API's {error, message}.
const errorType: Exactly<PlantStoreError['body']['error'], number> = true;

async function failureOf<T>(call: Promise<T>): Promise<T | { status: number; error: { error: number; message: string } }> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof PlantStoreError) return { status: error.status, error: error.body };
    throw error;
  }
}

export async function run(token: string): Promise<void> {
  void idType;
  void errorType;
  plantStoreConnection.token = token;
  const answer = (result: { data: Plant } | { status: number; error: { error: number; message: string } }): Answer =>
    'data' in result ? { plant: result.data } : result;
  const client: RoundTripClient = {
    create: async (plant) => answer(await failureOf(createPlant(plant))),
    list: async (query) => {
      const { data, headers } = await listPlants(query);
      return { plants: data, next: nextPage(headers.get('link')) };
    },
    patch: async (id, patch) => answer(await failureOf(updatePlant(id, patch))),
    remove: async (id) => {
      const result = await failureOf(deletePlant(id));
      return 'error' in result ? result : { deleted: true };
    },
  };
  await roundTrip(client);
}
