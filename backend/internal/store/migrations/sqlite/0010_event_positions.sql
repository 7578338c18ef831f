-- Nothing changes here: SQLite's one writer gives events their seqs in
-- commit order as it appends them. PostgreSQL's twin of this file gives
-- positions after the commit instead of under a lock.
SELECT 1;
