-- Nothing changes here: SQLite's twin of this file drops AUTOINCREMENT
-- from its events' seq. PostgreSQL numbers events after their commit
-- (0010) and never reads a counter table on the commit path.
SELECT 1;
