import { handleRestRequest } from '@/server/rest/handler';

// Every method goes to the REST edge, so unknown paths and wrong methods get the contract's JSON errors.
export const GET = handleRestRequest;
export const HEAD = handleRestRequest;
export const POST = handleRestRequest;
export const PUT = handleRestRequest;
export const PATCH = handleRestRequest;
export const DELETE = handleRestRequest;
export const OPTIONS = handleRestRequest;

export const dynamic = 'force-dynamic';
