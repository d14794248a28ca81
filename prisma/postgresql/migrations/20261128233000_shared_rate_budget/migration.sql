-- The rate-limit budgets every instance shares on PostgreSQL (written by hand: Prisma's schema language has no
-- UNLOGGED tables and no functions; db/engines.ts lists the table as external). One row per key (a token, a
-- client address group): a token bucket whose level was "tokens" at "at" (seconds since the epoch, by this
-- server's clock, so instances whose clocks differ still agree). "fullAt" is when it is full again: a row past
-- it means the same as no row, and the sweep deletes it.
--
-- UNLOGGED: a budget is worth nothing after a crash (PostgreSQL empties the table on recovery: every budget
-- starts full, as after a restart of one instance), and its writes skip the WAL.
CREATE UNLOGGED TABLE "RateBudget" (
    "key" TEXT NOT NULL,
    "tokens" DOUBLE PRECISION NOT NULL,
    "at" DOUBLE PRECISION NOT NULL,
    "fullAt" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "RateBudget_pkey" PRIMARY KEY ("key")
);

-- Takes units from a budget of `burst` refilled at `per_second`: `want` when they are there, else as many
-- whole units as are there when that is at least `need`, else none. Answers what it granted and the level
-- left (after the grant). One call is one row lock, so instances taking from one budget at once take turns
-- and never both spend the same unit. An instance asks for a slice of units at a time and spends them itself
-- (http/guards/rate-limit.ts), so most requests make no call at all.
CREATE FUNCTION "take_rate_budget"(budget_key TEXT, burst DOUBLE PRECISION, per_second DOUBLE PRECISION, need INTEGER, want INTEGER,
                                   OUT granted INTEGER, OUT level DOUBLE PRECISION)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  now_s DOUBLE PRECISION := extract(epoch FROM clock_timestamp());
  stored_tokens DOUBLE PRECISION;
  stored_at DOUBLE PRECISION;
BEGIN
  SELECT "tokens", "at" INTO stored_tokens, stored_at FROM "RateBudget" WHERE "key" = budget_key FOR UPDATE;
  IF NOT FOUND THEN
    -- A budget nobody used lately is full. Two instances may both find none: one inserts, the other waits on its
    -- row and reads it.
    INSERT INTO "RateBudget" ("key", "tokens", "at", "fullAt") VALUES (budget_key, burst, now_s, now_s) ON CONFLICT ("key") DO NOTHING;
    SELECT "tokens", "at" INTO stored_tokens, stored_at FROM "RateBudget" WHERE "key" = budget_key FOR UPDATE;
  END IF;
  -- A clock set back refills nothing, rather than draining the budget.
  level := least(burst, stored_tokens + greatest(0, now_s - stored_at) * per_second);
  granted := CASE WHEN level >= need THEN least(want, floor(level))::INTEGER ELSE 0 END;
  IF granted > 0 THEN
    level := level - granted;
    UPDATE "RateBudget" SET "tokens" = level, "at" = now_s, "fullAt" = now_s + (burst - level) / per_second WHERE "key" = budget_key;
  END IF;
END;
$$;
