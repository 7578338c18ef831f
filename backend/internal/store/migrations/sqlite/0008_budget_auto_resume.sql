-- A budget may ask that the sessions it paused resume by themselves when
-- it is raised (and an owner's, when its period rolls over): 1, else 0.
ALTER TABLE tree_budgets ADD COLUMN auto_resume INTEGER NOT NULL DEFAULT 0;
ALTER TABLE owner_budgets ADD COLUMN auto_resume INTEGER NOT NULL DEFAULT 0;
