/**
 * The Spark SQL functions Ebb runs, each checked against Spark by the conformance corpus
 * (test/interop/spark-sql-corpus.txt): a call to any other function is refused (`UNSUPPORTED_SQL`,
 * naming it) rather than run to an answer that may differ from Spark's. Names are lower-case.
 */
export const SPARK_FUNCTIONS: ReadonlySet<string> = new Set(
  `
  abs acos asin atan atan2 ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi  pow power
  radians rand random round  sign  sin sinh sqrt tan tanh greatest least
  cast try_cast
  ascii char chr concat concat_ws contains endswith startswith instr lcase left length char_length
  character_length levenshtein locate lower lpad ltrim  position regexp_extract
  regexp_replace regexp_like rlike repeat replace reverse right rpad rtrim split substr substring
  trim ucase upper translate   md5 sha1 sha2   base64  
  initcap substring_index split_part like ilike
  current_date current_timestamp now date_add date_sub datediff date_diff date_format date_trunc 
  to_date to_timestamp unix_timestamp from_unixtime year month day dayofmonth dayofweek dayofyear
  hour minute second quarter weekofyear last_day add_months months_between next_day make_date
  extract date_part timestamp_seconds timestamp_millis unix_seconds unix_millis unix_date date_from_unix_date
  get_json_object from_json to_json json_tuple
  array array_contains   array_intersect array_join array_max array_min
  array_position array_remove  array_sort  arrays_overlap arrays_zip sort_array
  element_at size cardinality slice sqrt     filter transform  
  explode   map map_keys map_values map_from_arrays map_contains_key struct
  named_struct
  coalesce nullif nvl nvl2 ifnull if isnull isnotnull isnan nanvl
  count sum avg mean min max first last first_value last_value any_value collect_list collect_set
  count_if bool_and bool_or every some any stddev stddev_samp stddev_pop variance var_samp var_pop
  approx_count_distinct  median corr covar_pop covar_samp max_by min_by
  row_number rank dense_rank percent_rank cume_dist ntile lag lead
  `
    .split(/\s+/)
    .filter((name) => name !== ""),
);

/**
 * Words that `name(` follows without being a function call (keywords, and types with a size such as
 * `DECIMAL(10, 2)`, which follow `AS`).
 */
/** Words that are a keyword before `(SELECT`, `(WITH` or `(WHERE` and a function otherwise. */
export const KEYWORD_OR_FUNCTION: ReadonlySet<string> = new Set(["exists", "some", "any", "filter"]);

export const NOT_FUNCTIONS: ReadonlySet<string> = new Set(
  `
  select from where and or not in as on using over values when then else case is like ilike
  rlike between join with union intersect except all distinct within group by order
  partition having limit lateral view table interval window rows range returns
  `
    .split(/\s+/)
    .filter((name) => name !== ""),
);
