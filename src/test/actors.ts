import { issueToken } from '@/server/auth/tokens';
import { createContext } from '@/trpc/init';
import { createCallerFactory } from '@/trpc/init';
import { appRouter } from '@/trpc/routers/_app';

const createCaller = createCallerFactory(appRouter);

/** A user with a real token in the test database, and a tRPC caller acting as them. */
export async function signIn(userName: string, role: 'admin' | 'member' = 'member') {
  const { token } = await issueToken({ userName, role });
  const context = await createContext({ authorization: `Bearer ${token}` });
  return { token, caller: createCaller(context), context };
}
