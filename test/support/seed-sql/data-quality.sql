SELECT
  row_expectations.dataset AS dataset,
  row_expectations.name AS expectation,
  SUM(row_expectations.passed_records) AS passing_records,
  SUM(row_expectations.failed_records) AS failing_records
FROM
  (
    SELECT
      explode(
        from_json(
          details:flow_progress:data_quality:expectations,
          "array<struct<name: string, dataset: string, passed_records: int, failed_records: int>>"
        )
      ) row_expectations
    FROM
      event_log('<pipeline-id>')
    WHERE
      event_type = 'flow_progress'
      AND origin.update_id = '<update-id>'
  )
GROUP BY
  row_expectations.dataset,
  row_expectations.name
ORDER BY
  dataset,
  expectation
