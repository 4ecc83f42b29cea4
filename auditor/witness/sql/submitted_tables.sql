-- The Rules Submission rows the audit audited (the quarantined left out), each with its
-- ruleset's pack and its discriminator as the table findings name a row: when it took
-- effect (`effective_from=2026-11-24T12:01:00.000000Z`). Shared by the table witnesses
-- (TBL001-004), which name it on a line `-- include: submitted_tables.sql` where their
-- statement's WITH clause begins.
WITH submitted AS (
  SELECT t.*, rule_pack(t.ruleset) AS pack,
         'effective_from=' || strftime(t.effective_from AT TIME ZONE 'UTC',
                                       '%Y-%m-%dT%H:%M:%S.%fZ') AS row_discriminator
  FROM tables t
  WHERE quarantine_id(t.table_id) || '/' || strftime(t.effective_from AT TIME ZONE 'UTC',
                                      '%Y-%m-%d %H:%M:%S.%f+00:00')
        NOT IN (SELECT row_key FROM quarantine WHERE "table" = 'tables')
)
