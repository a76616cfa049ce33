-- Number 0008 belongs to a change made beside trusted publishing (0009); this file holds its
-- place on the trusted-publishing branch so the numbers run without a gap, and goes when that
-- change is merged.
SELECT 1;
