-- 0017_expect: narrator_expect fails the statement, and so the transaction,
-- that calls it with anything but true. A group of creates that planned
-- against what the last group left sends its checks of that plan with its
-- writes and its commit, in one round trip: when a check fails, nothing is
-- written, and the group runs again from what it reads. PostgreSQL only:
-- SQLite has no use for it, and its migrations leave the number out.
CREATE FUNCTION narrator_expect(ok boolean) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF ok IS NOT TRUE THEN
		RAISE EXCEPTION 'a group''s plan no longer holds' USING ERRCODE = 'NR001';
	END IF;
END $$;
