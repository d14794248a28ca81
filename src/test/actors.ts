import { issueToken } from '@/server/tokens/service';
import { createContext } from '@/server/trpc/init';
import { createCallerFactory } from '@/server/trpc/init';
import { appRouter } from '@/server/trpc/app-router';

const createCaller = createCallerFactory(appRouter);

/** A user with a real token in the test database, and a tRPC caller acting as them. */
export async function signIn(userName: string, role: 'admin' | 'member' = 'member') {
  const { token } = await issueToken({ userName, role });
  const context = await createContext({ authorization: `Bearer ${token}` });
  return { token, caller: createCaller(context), context };
}
