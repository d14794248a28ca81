/** openapi-typescript's types and openapi-fetch, set up as docs/api.md shows, through the round trip. */
import type { components } from './plant-store';
import { plantStore } from './plant-store-openapi-fetch';
import { nextPage } from './plant-store-json';
import { type Answer, type Exactly, type RoundTripClient, roundTrip } from './round-trip';

// An int64 is `number | bigint`, never a plain number that could have been rounded.
const idType: Exactly<components['schemas']['Plant']['id'], number | bigint> = true;
// An error answer is the API's {error, message}, its `error` narrowed to what the operation can answer.
type CreateFailure = Exclude<Awaited<ReturnType<ReturnType<typeof plantStore>['POST']>>['error'], undefined>;
const errorType: Exactly<CreateFailure['message'], string> = true;

export async function run(token: string): Promise<void> {
  void idType;
  void errorType;
  const api = plantStore(token);
  const answer = <T extends { id: number | bigint; name: string; tag?: string }>(
    result: { data?: T; error?: { error: number; message: string }; response: Response },
  ): Answer => (result.data ? { plant: result.data } : { status: result.response.status, error: result.error! });
  const client: RoundTripClient = {
    create: async (plant) => answer(await api.POST('/plants', { body: plant })),
    list: async (query) => {
      const { data, error, response } = await api.GET('/plants', { params: { query } });
      if (!data) throw new Error(`list: ${response.status} ${error?.message}`);
      return { plants: data, next: nextPage(response.headers.get('link')) };
    },
    patch: async (id, patch) => answer(await api.PATCH('/plants/{id}', { params: { path: { id } }, body: patch })),
    remove: async (id) => {
      const { error, response } = await api.DELETE('/plants/{id}', { params: { path: { id } } });
      return error ? { status: response.status, error } : { deleted: true };
    },
  };
  await roundTrip(client);
}
